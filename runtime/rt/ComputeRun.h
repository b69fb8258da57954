// ComputeRun — the path of runProgram that computes for real (rt/ComputeRun.cpp). Internal to
// runtime/rt/.
#pragma once

#include "rt/Decoded.h"
#include "rt/Program.h"
#include "rt/RankContext.h"

#include <ostream>

namespace schedc::rt {

// Where a run prints: the report, diagnostics and errors (rank 0's, else discarded), and
// the --stats lines (every rank's, gathered at rank 0).
struct Streams {
  std::ostream &out;
  std::ostream &err;
  std::ostream &stats;
};

// Runs `decoded` on the real backend `run` asks for, this process computing its own rank.
// Returns the exit code, the same on every rank.
int computeForReal(Decoded &decoded, const std::optional<std::vector<int64_t>> &evaluated,
                   const sim::RunOptions &options, const ComputeRun &run, backend::Comm &comm, DiagnosticEngine &diags,
                   const Streams &streams);

} // namespace schedc::rt
