// main — the entry point of `schedc`. Runs the driver on a thread with a large stack, so that
// deeply nested (but within-limit) input cannot overflow it, and turns anything that escapes
// the driver (only a compiler bug can) into an internal error with exit code 70.
#include "codegen/Codegen.h"
#include "diagnostics/Diagnostics.h"
#include "driver/Driver.h"
#include "sim/Budget.h"

#include <exception>
#include <iostream>
#include <new>
#include <pthread.h>

namespace {

struct Job {
  std::vector<std::string> args;
  int exitCode = schedc::kExitInternal;
};

void *runJob(void *p) {
  auto *job = static_cast<Job *>(p);
  try {
    job->exitCode = schedc::driver::runDriver(job->args);
  } catch (const std::bad_alloc &) { // not expected: operator new's handler never throws
    std::cerr << "schedc: error: out of memory; stopping (see --memory-limit)\n";
    job->exitCode = schedc::kExitLimit;
  } catch (const std::exception &e) {
    std::cerr << "schedc: internal error: " << e.what() << " (please report this bug)\n";
    job->exitCode = schedc::kExitInternal;
  }
  return nullptr;
}

} // namespace

int main(int argc, char **argv) {
  schedc::codegen::installFatalErrorHandler();
  schedc::sim::installOutOfMemoryHandler();
  Job job;
  job.args.assign(argv + 1, argv + argc);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t(512) << 20);
  pthread_t thread;
  if (pthread_create(&thread, &attr, runJob, &job) != 0) {
    runJob(&job); // could not make the thread: run on the main stack
  } else {
    pthread_join(thread, nullptr);
  }
  pthread_attr_destroy(&attr);
  std::cout.flush();
  return job.exitCode;
}
