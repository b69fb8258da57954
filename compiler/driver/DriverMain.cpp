// driverMain: the main of both driver programs (schedc and schedc-llvm). The driver runs on a
// 512 MiB stack, and whatever escapes it becomes an exit code. The stack is a fiber's on the
// main thread, not a second thread's: a process that never starts a thread keeps its
// shared_ptr counts non-atomic (libstdc++ asks __libc_single_threaded), and the checker
// copies value pointers on every operation.
#include "diagnostics/Diagnostics.h"
#include "driver/Driver.h"
#include "sim/Budget.h"
#include "sim/Fiber.h"

#include <exception>
#include <iostream>
#include <new>

namespace schedc::driver {

namespace {

struct Job {
  std::vector<std::string> args;
  const Compiler *compiler = nullptr;
  int exitCode = kExitInternal;
};

void *runJob(void *p) {
  auto *job = static_cast<Job *>(p);
  try {
    job->exitCode = runDriver(job->args, job->compiler);
  } catch (const std::bad_alloc &) { // not expected: operator new's handler never throws
    std::cerr << "schedc: error: out of memory; stopping (see --memory-limit)\n";
    job->exitCode = kExitLimit;
  } catch (const std::exception &e) {
    std::cerr << "schedc: internal error: " << e.what() << " (please report this bug)\n";
    job->exitCode = kExitInternal;
  }
  return nullptr;
}

constexpr size_t kDriverStack = size_t(512) << 20;

} // namespace

int driverMain(int argc, char **argv, const Compiler *compiler) {
  sim::installOutOfMemoryHandler();
  Job job;
  job.args.assign(argv + 1, argv + argc);
  job.compiler = compiler;
  sim::Fiber driver([&job] { runJob(&job); }, kDriverStack);
  if (!driver.prepare())
    runJob(&job); // no room for the stack: run on the main one
  else
    driver.resume(); // the driver never yields: this returns when it is done
  std::cout.flush();
  return job.exitCode;
}

} // namespace schedc::driver
