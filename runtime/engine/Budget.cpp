// Budget implementation: the step count every statement, the clock every 256, resident
// memory (/proc/self/statm) every 10 ms of run time and whenever the thread has allocated
// another 1/128 of the limit, and the allocation reserve.
#include "engine/Budget.h"

#include "diagnostics/Diagnostics.h"
#include "memory/ThreadAllocation.h"
#include "options/OptionValues.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <unistd.h>

namespace schedc::sim {

namespace {

std::atomic<void *> reserve{nullptr}; // (threads of a parallel run may fail at once)
std::atomic<bool> reserveKept{false}; // the handler is installed with a reserve
constexpr size_t kReserveBytes = size_t(64) << 20;

// operator new's handler: give back the reserve once and let the allocation try again; the
// run notices at its next statement. Past that there is nothing left to give: end now.
void onAllocationFailure() {
  if (void *kept = reserve.exchange(nullptr)) {
    std::free(kept);
    Budget::allocationFailed.store(true, std::memory_order_relaxed);
    return;
  }
  static const char line[] = "schedc: error: out of memory: an allocation failed after the run had given back its "
                             "reserve; stopping (a smaller configuration, or more memory, is needed)\n";
  (void)!::write(STDERR_FILENO, line, sizeof line - 1);
  std::_Exit(kExitLimit);
}

} // namespace

const char *const kLimitsHelp =
    "  --max-steps=N        give up after N executed statements (default 1000000000)\n"
    "  --time-limit=SECONDS give up after this much wall-clock time (default 600; 0: none)\n"
    "  --memory-limit=MiB   give up when the process holds more memory than this (default:\n"
    "                       3/8 of the machine's memory; 0: none)\n";

Limits defaultLimits() {
  Limits l;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    l.maxMemoryMiB = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) / 8 * 3 >> 20;
  return l;
}

std::string limitFlag(const std::string &arg) {
  for (const char *flag : {"--max-steps", "--time-limit", "--memory-limit"}) {
    std::string f = flag;
    if (arg == f || arg.compare(0, f.size() + 1, f + "=") == 0)
      return f;
  }
  return {};
}

void parseLimitOption(const std::string &flag, const std::string &value, Limits &limits, std::string &error) {
  if (flag == "--max-steps") {
    if (!parseWholeNumber(value, 1, 1'000'000'000'000'000'000, limits.maxSteps))
      error = "--max-steps needs a whole number from 1 to 10^18";
  } else if (flag == "--time-limit") {
    if (!parseDecimal(value, 0, 1e9, limits.maxSeconds))
      error = "--time-limit needs a number of seconds from 0 (no limit) to 10^9";
  } else if (flag == "--memory-limit") {
    if (!parseWholeNumber(value, 0, 1'000'000'000'000, limits.maxMemoryMiB))
      error = "--memory-limit needs a whole number of MiB from 0 (no limit) to 10^12";
  }
}

namespace {
const uint64_t kAlwaysPast = UINT64_MAX;
}

Budget::Budget(const Limits &limits)
    : limits_(limits), allocated_(&kAlwaysPast),
      start_(limits.started != std::chrono::steady_clock::time_point{} ? limits.started
                                                                       : std::chrono::steady_clock::now()),
      lastMemoryCheck_(std::chrono::steady_clock::now()) {}

std::string Budget::checkLimits() {
  uint64_t steps = steps_;
  if (shared_) {
    steps = shared_->fetch_add(steps_ - sharedSteps_, std::memory_order_relaxed) + (steps_ - sharedSteps_);
    sharedSteps_ = steps_;
  }
  if (steps > limits_.maxSteps)
    return "the schedule runs more than " + std::to_string(limits_.maxSteps) +
           " statements; stopping (is a loop bound too large? --max-steps=N raises the limit)";
  if (memoryExhausted())
    return "the machine's memory ran out (an allocation failed with " + std::to_string(residentBytes() >> 20) +
           " MiB in use); stopping (a smaller configuration, or more memory, is needed)";
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - start_).count();
  if (limits_.maxSeconds > 0 && seconds > limits_.maxSeconds)
    return "the run takes more than " + std::to_string(static_cast<uint64_t>(limits_.maxSeconds)) +
           " seconds; stopping (--time-limit=SECONDS raises the limit, 0 removes it)";
  uint64_t slice = std::max<uint64_t>((limits_.maxMemoryMiB << 20) / kMemorySlices, 1);
  if (allocated_ == &kAlwaysPast) {              // the first look, on the thread that runs this budget: the
    allocated_ = memory::threadAllocatedBytes(); // count from here (the run has held nothing yet)
    nextMemoryLook_ = limits_.maxMemoryMiB == 0 ? UINT64_MAX : *allocated_ + slice;
    return {};
  }
  bool allocatedSlice = *allocated_ >= nextMemoryLook_;
  if (limits_.maxMemoryMiB == 0) {
    nextMemoryLook_ = UINT64_MAX;
  } else if (allocatedSlice || now - lastMemoryCheck_ >= std::chrono::milliseconds(10)) {
    nextMemoryLook_ = *allocated_ + slice;
    lastMemoryCheck_ = now;
    uint64_t mib = residentBytes() >> 20;
    if (mib > limits_.maxMemoryMiB)
      return "the run holds " + std::to_string(mib) + " MiB, more than the limit of " +
             std::to_string(limits_.maxMemoryMiB) + " MiB; stopping (--memory-limit=MiB raises it, 0 removes it)";
  }
  return {};
}

uint64_t residentBytes() {
  std::FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  unsigned long long size = 0, resident = 0;
  int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  long pageSize = sysconf(_SC_PAGESIZE);
  return n == 2 && pageSize > 0 ? resident * static_cast<uint64_t>(pageSize) : 0;
}

void installOutOfMemoryHandler() {
  if (!reserve && !Budget::allocationFailed.load())
    reserve = std::malloc(kReserveBytes);
  reserveKept = true;
  std::set_new_handler(onAllocationFailure);
}

void renewOutOfMemoryReserve() {
  if (!reserveKept || reserve.load() || !Budget::allocationFailed.load())
    return;
  if (void *fresh = std::malloc(kReserveBytes)) {
    reserve = fresh;
    Budget::allocationFailed = false;
  }
}

} // namespace schedc::sim
