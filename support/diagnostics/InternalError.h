// InternalError — the one way schedc stops on a case that cannot happen (a compiler or
// runtime bug, never a user's mistake): it prints `file:line: internal error: what (please
// report this bug)` to stderr and exits with kExitInternal (70). User errors are diagnostics
// (diagnostics/Diagnostics.h); this is for the `default:` of a closed switch, an operand the
// verifier guarantees, an index that must be in range.
//
//   SCHEDC_ASSERT(op.values.size() == 1, "shard without its value");
//   SCHEDC_UNREACHABLE("unknown operation kind");
#pragma once

namespace schedc {

[[noreturn]] void internalError(const char *file, int line, const char *what);

} // namespace schedc

#define SCHEDC_UNREACHABLE(what) ::schedc::internalError(__FILE__, __LINE__, what)
#define SCHEDC_ASSERT(condition, what)                                                                                 \
  do {                                                                                                                 \
    if (!(condition))                                                                                                  \
      ::schedc::internalError(__FILE__, __LINE__, what);                                                               \
  } while (false)
