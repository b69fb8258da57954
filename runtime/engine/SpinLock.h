// SpinLock — a lock for the short critical sections several threads of a parallel run
// share (finding a collective's call in its group: a few dozen instructions). A mutex puts a
// waiter to sleep and wakes it with two system calls; this spins on a read (without writing
// the lock's cache line), pausing, and gives the processor up after a while, as its holder
// may have lost its own.
#pragma once

#include <atomic>
#include <thread>

namespace schedc::sim {

// Tells the processor the thread is waiting in a loop (it eases off the other hardware thread
// of its core, and the loop's exit costs no mispredicted memory order).
inline void pauseProcessor() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SpinLock {
public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire))
      for (unsigned spins = 0; locked_.load(std::memory_order_relaxed); ++spins)
        if (spins < kSpins)
          pauseProcessor();
        else
          std::this_thread::yield();
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

private:
  static constexpr unsigned kSpins = 1000;
  std::atomic<bool> locked_{false};
};

} // namespace schedc::sim
