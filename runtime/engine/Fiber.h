// Fiber — a cooperatively scheduled execution context with its own stack, so the sim backend
// can run every rank of a schedule in one thread: a rank runs until it must wait (a
// collective, a receive) and then yields to the scheduler. The interpreter of `schedc check`
// and compiled schedules both run on fibers and call the same backend. A switch is Boost.
// Context's fcontext (a few instructions, no system call: ucontext's swapcontext saved the
// signal mask with one on every switch). Stacks are reserved lazily (only touched pages cost
// memory), come from slabs of many stacks (one system call for a slab, not three per stack),
// end in a guard page (a page-table marker; on kernels before 6.13 a PROT_NONE page, and past
// 16 384 of those in a thread, or the system's limit on memory mappings, none: Fiber.cpp),
// and go back to a pool when their fiber ends, so a later fiber reuses them without a system
// call. Under AddressSanitizer every switch is announced to it, so it follows the fibers'
// stacks.
#pragma once

#include "memory/Sanitizer.h"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace schedc::sim {

// A rank's stack: 8 MiB, reserved, not committed — room for the 10 000 nested calls sema
// allows. Frames under AddressSanitizer and ThreadSanitizer are several times larger: 64 MiB
// there.
#if defined(SCHEDC_ASAN) || defined(SCHEDC_TSAN)
constexpr size_t kFiberStackBytes = size_t(64) << 20;
#else
constexpr size_t kFiberStackBytes = size_t(8) << 20;
#endif
// A shallow program's stack (check/StackSize.h decides): eight share a page table where an
// 8 MiB stack takes one of its own. Under the sanitizers, the default.
#if defined(SCHEDC_ASAN) || defined(SCHEDC_TSAN)
constexpr size_t kShallowStackBytes = kFiberStackBytes;
#else
constexpr size_t kShallowStackBytes = size_t(256) << 10;
#endif

class Fiber {
public:
  static constexpr size_t kDefaultStack = kFiberStackBytes;

  explicit Fiber(std::function<void()> body, size_t stackBytes = kDefaultStack);
  ~Fiber();
  Fiber(const Fiber &) = delete;
  Fiber &operator=(const Fiber &) = delete;

  // Reserves the stack if that is not done yet. False if the system refuses it (out of
  // address space, or of memory mappings: vm.max_map_count); the fiber cannot run then.
  bool prepare();
  bool started() const { return started_; }
  // Runs the fiber (prepared) until it yields or its body returns. True once it has finished.
  bool resume();
  bool finished() const { return finished_; }
  // Called from inside a running fiber: returns to whoever resumed it.
  static void yield();
  // The fiber running now, or null on the scheduler's own stack.
  static Fiber *current();
  // The lowest address the running fiber's frames may reach (just above its guard page), or
  // 0 on a thread's own stack: code that nests without a bound of its own (the interpreter's
  // blocks) stops itself before it gets there.
  static uintptr_t stackFloor();
  // The running fiber's stack size, or 0 on a thread's own stack.
  static size_t stackBytes();
  // Where the caller's frame is on its stack (to compare with stackFloor), without making the
  // caller keep a frame pointer as __builtin_frame_address would.
  static uintptr_t stackPointer() {
    uintptr_t sp;
#if defined(__x86_64__)
    asm volatile("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    asm volatile("mov %0, sp" : "=r"(sp));
#else
    sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#endif
    return sp;
  }

  // Stacks kept for reuse in this thread (after their fibers ended).
  static size_t pooledStacks();

private:
  friend struct FiberEntry; // the first frame on the fiber's stack (Fiber.cpp)

  std::function<void()> body_;
  void *context_ = nullptr; // the fiber where it stopped (fcontext_t)
  void *caller_ = nullptr;  // whoever resumed it, where it waits
  void *stack_ = nullptr;
  size_t stackBytes_ = 0;
  unsigned valgrindStack_ = 0;
  // The resuming side's stack, for AddressSanitizer's switch announcements.
  const void *callerStack_ = nullptr;
  size_t callerStackBytes_ = 0;
  void *tsanFiber_ = nullptr, *tsanCaller_ = nullptr; // ThreadSanitizer's names of it and its resumer
  bool started_ = false;
  bool finished_ = false;
};

} // namespace schedc::sim
