// Watchdog implementation: a POSIX timer of its own (timer_create) that raises a real-time
// signal at the deadline — not SIGALRM and setitimer, which libFuzzer uses for its -timeout
// and a program may too; the handler does only what a handler may (write(2) of a line made
// beforehand, _exit).
#include "sim/Watchdog.h"

#include "diagnostics/Diagnostics.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <ctime>
#include <unistd.h>

namespace schedc::sim {

namespace {
std::atomic<bool> watching{false};
char line[512];
size_t lineBytes = 0;
struct sigaction before {};
timer_t timer;
int signalNumber() {
  return SIGRTMIN + 4;
}

void onDeadline(int) {
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
  if (sigaction(signalNumber(), &on, &before) != 0) {
    watching = false; // no timer to be had: the run's own checks remain
    return;
  }
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
    sigaction(signalNumber(), &before, nullptr);
    watching = false;
    return;
  }
  if (timer_settime(timer, 0, &when, nullptr) != 0) {
    timer_delete(timer);
    sigaction(signalNumber(), &before, nullptr);
    watching = false;
    return;
  }
  armed_ = true;
}

Watchdog::~Watchdog() {
  if (!armed_)
    return;
  timer_delete(timer);
  sigaction(signalNumber(), &before, nullptr);
  watching = false;
}

} // namespace schedc::sim
