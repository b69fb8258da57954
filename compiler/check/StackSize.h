// StackSize — the fiber stack a rank needs to interpret a schedule. The interpreter takes a
// few frames for every level of nesting on its path — a block inside an `if`, a loop, an
// overlap or a call, and an expression or operation inside another — and stops a rank whose
// nesting reaches half its stack (Interpreter.cpp, room()). A program whose deepest path is
// shallow (nearly every schedule: a handful of levels) runs on kShallowStackBytes stacks,
// eight to a page table where an 8 MiB stack takes a page table of its own (an all-reduce
// over 65 536 ranks, all waiting at once: 265 MB of page tables with 8 MiB stacks, 34 MB
// with these, VmPTE at its peak); a deeper one keeps the default.
#pragma once

#include "ir/IR.h"

#include <cstddef>
#include <cstdint>

namespace schedc::check {

// The levels of nesting on the deepest path from `schedule`'s body (blocks, calls into the
// callee's own levels, expressions and operations), at most kNestingCap.
uint32_t nestingLevels(const ir::Program &program, const ir::Function &schedule);
constexpr uint32_t kNestingCap = 1u << 24;

// kShallowStackBytes when nestingLevels at kBytesPerLevel take at most a quarter of it (half
// is what the interpreter lets nesting reach; the rest is for the simulator's own calls),
// else kFiberStackBytes.
size_t stackBytesFor(const ir::Program &program, const ir::Function &schedule);
// Generous for blocks and expressions (about 80 and 160 bytes of frames a level, the
// interpreter's comments); an operation nested in another takes less than 650 (200 of them
// ran in a 128 KiB stack, measured), and nests at most 256 deep (the parser), so at the
// threshold they stay under 84 KiB of the 256.
constexpr size_t kBytesPerLevel = 512;

} // namespace schedc::check
