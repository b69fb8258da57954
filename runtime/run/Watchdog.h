// Watchdog — --time-limit from a timer signal, which no lock, fiber or MPI call can block. A
// run stops at the limit by itself at its next statement (Budget, with the error at that
// statement and its report); the watchdog is for a run that never gets to one: lanes asleep
// on a lock, a rank of the cpu or cuda backend waiting in MPI or NCCL for a peer that stopped.
// Past the limit and a grace for that report (kGraceSeconds), a timer's signal (a real-time
// one: SIGALRM is libFuzzer's) ends the process with one line and kExitLimit. A signal, not
// a thread: a process that starts no thread keeps glibc's single-threaded reference counts
// (driver/DriverMain.cpp).
#pragma once

#include "engine/Budget.h"

namespace schedc::sim {

class Watchdog {
public:
  static constexpr double kGraceSeconds = 2;
  // Watches the run that started at `limits.started` for `limits.maxSeconds` (none at 0).
  // One watchdog a process: where one already watches (a compute run's verification inside
  // it), this one does nothing.
  explicit Watchdog(const Limits &limits);
  ~Watchdog(); // the run is over: stops watching
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

private:
  bool armed_ = false;
};

} // namespace schedc::sim
