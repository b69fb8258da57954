// driverMain: the main of both driver programs (schedc and schedc-llvm). The driver runs on a
// 512 MiB stack, so that deeply nested (but within-limit) input cannot overflow it, and
// whatever escapes it becomes an exit code. The stack is a fiber's on the main thread, not a
// second thread's: a process that never starts a thread keeps glibc's single-threaded flag,
// and libstdc++'s shared_ptr then counts references without atomic instructions (measured in
// docs/performance.md).
#include "diagnostics/Diagnostics.h"
#include "diagnostics/StandardOutput.h"
#include "driver/Driver.h"
#include "engine/Budget.h"
#include "engine/Fiber.h"

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

void runJob(Job *job) {
  try {
    job->exitCode = runDriver(job->args, job->compiler);
  } catch (const std::bad_alloc &) { // not expected: operator new's handler never throws
    std::cerr << "schedc: error: out of memory; stopping (see --memory-limit)\n";
    job->exitCode = kExitLimit;
  } catch (const std::exception &e) {
    std::cerr << "schedc: internal error: " << e.what() << " (please report this bug)\n";
    job->exitCode = kExitInternal;
  }
}

constexpr size_t kDriverStackBytes = size_t(512) << 20;

} // namespace

int driverMain(int argc, char **argv, const Compiler *compiler) {
  sim::installOutOfMemoryHandler();
  guardStandardStreams();
  Job job;
  job.args.assign(argv + 1, argv + argc);
  job.compiler = compiler;
  sim::Fiber driver([&job] { runJob(&job); }, kDriverStackBytes);
  if (!driver.prepare())
    runJob(&job); // the system refuses the stack (ulimit -v): run on the main stack
  else
    driver.resume(); // the driver never yields: this returns when it is done
  return finishStandardOutput(job.exitCode, "schedc");
}

} // namespace schedc::driver
