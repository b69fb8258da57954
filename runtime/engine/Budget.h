// Budget — the resource limits of one simulated run, checked as it goes, so that no schedule
// (a loop bound of a billion, a million layers, tens of thousands of ranks) can make schedc
// run or grow without end: statements executed (--max-steps), wall-clock seconds
// (--time-limit) and the process's resident memory (--memory-limit: looked at whenever the
// running thread has allocated another 1/128 of it, so a run stops within that and one
// statement's allocation past it). A run that reaches one
// stops with an error naming the limit and the option that raises it, and the command exits
// with kExitLimit. The same options are read by `schedc check/draw/run/compare` and by
// compiled programs (parseLimitOption), so both stop alike.
//
// Allocation failures are a limit too: installOutOfMemoryHandler() keeps a reserve that
// operator new's handler gives back on the first failure (the run then stops at its next
// statement with a clear error); only a second failure ends the process at once, with one
// line and kExitLimit. std::bad_alloc is never thrown.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace schedc::sim {

struct Limits {
  // Statements executed over all ranks: several times the largest real step (a 405B-class
  // megatron mesh; docs/performance.md), and a runaway loop still stops within minutes, inside
  // the 600 s time limit.
  uint64_t maxSteps = 1'000'000'000;
  double maxSeconds = 600;   // wall clock of the run; 0: none
  uint64_t maxMemoryMiB = 0; // resident memory of the process; 0: none (see defaultLimits)
  // When the run's clock started (maxSeconds counts from it); unset: when its Budget is made.
  // A run made again on one thread after its lanes met a problem keeps its first start.
  std::chrono::steady_clock::time_point started{};
};

// The defaults: 1 000 000 000 statements, 600 s, and 3/8 of the machine's physical memory, so
// that two runs side by side (held within a few percent of their limit) leave a quarter of it.
Limits defaultLimits();

// If `arg` is a limit's option (`--max-steps`, `--time-limit`, `--memory-limit`), that flag.
std::string limitFlag(const std::string &arg);
// Reads a limit's value into `limits`; sets `error` if it is bad.
void parseLimitOption(const std::string &flag, const std::string &value, Limits &limits, std::string &error);
// The help lines of those options, for the usage texts of schedc and compiled programs.
extern const char *const kLimitsHelp;

class Budget {
public:
  explicit Budget(const Limits &limits);
  // Charges one executed statement: true while the run is within every limit; otherwise
  // false, and exceeded() is the error that stops it (which limit, and how to raise it).
  bool charge() {
    ++steps_;
    if (steps_ <= limits_.maxSteps && (steps_ & (kCheckEvery - 1)) != 0 && !memoryExhausted() &&
        *allocated_ < nextMemoryLook_) [[likely]]
      return true;
    return withinLimits();
  }
  const std::string &exceeded() const { return exceeded_; }
  // Counts statements into `total` too, shared with other threads' budgets (a parallel run:
  // engine/World.h's Lane), and holds the run to maxSteps over all of them: each adds what it
  // ran at its looks at the clock, so the run stops within a few hundred statements a
  // thread of the limit.
  void share(std::atomic<uint64_t> &total) { shared_ = &total; }

  // Set by operator new's handler when it gave back the reserve (installOutOfMemoryHandler).
  static inline std::atomic<bool> allocationFailed{false};

private:
  static constexpr uint64_t kCheckEvery = 256; // statements between looks at the clock
  static bool memoryExhausted() { return allocationFailed.load(std::memory_order_relaxed); }
  std::string checkLimits();
  // charge()'s look at every limit, out of line: its message is no local of every caller.
  [[gnu::noinline]] bool withinLimits() {
    exceeded_ = checkLimits();
    return exceeded_.empty();
  }

  Limits limits_;
  uint64_t steps_ = 0;
  // The bytes this budget's thread has allocated (memory/ThreadAllocation.h), and the count at
  // which it next looks at the process's memory: each time the thread has allocated another
  // 1/kMemorySlices of --memory-limit, besides every 10 ms. Until the first look (on the
  // thread that runs the budget, at its first statement) a count that is always past it.
  static constexpr uint64_t kMemorySlices = 128;
  const uint64_t *allocated_;
  uint64_t nextMemoryLook_ = 0;
  std::atomic<uint64_t> *shared_ = nullptr;
  uint64_t sharedSteps_ = 0; // steps_ when last added to *shared_
  std::string exceeded_;
  std::chrono::steady_clock::time_point start_, lastMemoryCheck_;
};

// The process's resident memory now, in bytes (0 if it cannot be read).
uint64_t residentBytes();

// Installs operator new's handler with its reserve (once per process; idempotent).
void installOutOfMemoryHandler();
// Takes a reserve again where a run gave it back and has since let go of its memory (a
// parallel run that diverged for want of memory, before the run on one thread).
void renewOutOfMemoryReserve();

} // namespace schedc::sim
