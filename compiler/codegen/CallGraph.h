// CallGraph — what codegen needs to know about which function calls which: the functions a
// schedule reaches, and which to keep out of line (by the call heights sema records in the
// IR). No LLVM types here.
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <vector>

namespace schedc::codegen {

// The functions `entry` can reach (the procedures it calls, transitively), `entry` first.
std::vector<uint32_t> reachableFunctions(const ir::Program &program, uint32_t entry);

// Whether a procedure of this height must not be inlined into its callers: one in every
// kInlineLevels levels of a chain is kept out of line, so inlining copies each body a
// bounded number of times. (A 5 000-deep chain of calls, inlined all the way up, grew the
// IR quadratically: `schedc build` took tens of seconds.)
constexpr uint32_t kInlineLevels = 8;
inline bool keepOutOfLine(uint32_t height) {
  return height > 0 && height % kInlineLevels == 0;
}

} // namespace schedc::codegen
