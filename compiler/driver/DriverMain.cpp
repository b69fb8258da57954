// driverMain: the main of both driver programs (schedc and schedc-llvm). The driver runs on a
// thread with a 512 MiB stack, so that deeply nested (but within-limit) input cannot
// overflow it, and whatever escapes it becomes an exit code.
#include "diagnostics/Diagnostics.h"
#include "driver/Driver.h"
#include "sim/Budget.h"

#include <exception>
#include <iostream>
#include <new>
#include <pthread.h>

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

} // namespace

int driverMain(int argc, char **argv, const Compiler *compiler) {
  sim::installOutOfMemoryHandler();
  Job job;
  job.args.assign(argv + 1, argv + argc);
  job.compiler = compiler;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t(512) << 20);
  pthread_t thread;
  if (pthread_create(&thread, &attr, runJob, &job) != 0)
    runJob(&job); // could not make the thread: run on the main stack
  else
    pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  std::cout.flush();
  return job.exitCode;
}

} // namespace schedc::driver
