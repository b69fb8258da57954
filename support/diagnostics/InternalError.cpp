// InternalError implementation: report and leave at once. std::_Exit runs no destructors or
// atexit handlers, which may not be safe from where the bug was found (a rank's fiber, an
// MPI process mid-collective); what was printed is flushed first. In the fuzzing build it
// aborts instead: libFuzzer keeps the input of a crash, not of an exit.
#include "diagnostics/InternalError.h"

#include "diagnostics/Diagnostics.h"

#include <cstdio>
#include <cstdlib>

namespace schedc {

void internalError(const char *file, int line, const char *what) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s:%d: internal error: %s (please report this bug)\n", file, line, what);
  std::fflush(stderr);
#ifdef SCHEDC_INTERNAL_ERROR_ABORTS
  std::abort(); // a crash to the fuzzer, which keeps the input
#else
  std::_Exit(kExitInternal);
#endif
}

} // namespace schedc
