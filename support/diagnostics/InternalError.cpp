// InternalError implementation: report and leave at once. std::_Exit runs no destructors or
// atexit handlers, which may not be safe from where the bug was found (a rank's fiber, an
// MPI process mid-collective); what was printed is flushed first.
#include "diagnostics/InternalError.h"

#include "diagnostics/Diagnostics.h"

#include <cstdio>
#include <cstdlib>

namespace schedc {

void internalError(const char *file, int line, const char *what) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s:%d: internal error: %s (please report this bug)\n", file, line, what);
  std::fflush(stderr);
  std::_Exit(kExitInternal);
}

} // namespace schedc
