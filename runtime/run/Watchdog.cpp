// Watchdog implementation: a POSIX timer of its own (timer_create) that raises a real-time
// signal at the deadline — not SIGALRM and setitimer, which libFuzzer uses for its -timeout
// and a program may too; the handler does only what a handler may (write(2) of a line made
// beforehand, _exit).
#include "run/Watchdog.h"

#include "diagnostics/Diagnostics.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <unistd.h>

namespace schedc::sim {

namespace {
std::atomic<bool> watching{false};
volatile sig_atomic_t armed = 0; // the handler stays installed; a signal that comes late finds 0
char line[512];
size_t lineBytes = 0;
timer_t timer;
int signalNumber() {
  return SIGRTMIN + 4;
}

void onDeadline(int) {
  if (!armed)
    return;
  (void)!::write(STDERR_FILENO, line, lineBytes);
  std::_Exit(kExitLimit);
}
} // namespace

Watchdog::Watchdog(const Limits &limits) {
  if (limits.maxSeconds <= 0 || watching.exchange(true))
    return;
  std::chrono::duration<double> left = limits.started - std::chrono::steady_clock::now() +
                                       std::chrono::duration<double>(limits.maxSeconds + kGraceSeconds);
  double seconds = std::max(left.count(), 0.001);
  int n = std::snprintf(line, sizeof line,
                        "schedc: error: the run takes more than %llu seconds and has not reached a statement "
                        "where it could stop (one statement runs that long, or it waits for a peer in MPI or "
                        "NCCL); ending it (--time-limit=SECONDS raises the limit, 0 removes it)\n",
                        static_cast<unsigned long long>(limits.maxSeconds));
  lineBytes = n > 0 ? std::min(static_cast<size_t>(n), sizeof line - 1) : 0;
  struct sigaction on {};
  on.sa_handler = onDeadline;
  sigemptyset(&on.sa_mask);
  sigevent event{};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = signalNumber();
  itimerspec when{};
  when.it_value.tv_sec = static_cast<time_t>(seconds);
  when.it_value.tv_nsec = static_cast<long>((seconds - static_cast<double>(when.it_value.tv_sec)) * 1e9);
  // No handler or timer to be had: the run's own checks remain.
  if (sigaction(signalNumber(), &on, nullptr) != 0 || timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
    watching = false;
    return;
  }
  armed = 1;
  if (timer_settime(timer, 0, &when, nullptr) != 0) {
    armed = 0;
    timer_delete(timer);
    watching = false;
    return;
  }
  armed_ = true;
}

Watchdog::~Watchdog() {
  if (!armed_)
    return;
  armed = 0; // (the handler stays: a real-time signal already queued would end the process)
  timer_delete(timer);
  watching = false;
}

} // namespace schedc::sim
