// Check — `schedc check`: describes the entry schedule to the sim backend, evaluates its
// parameters, and runs every rank through the IR interpreter (sim::runAndReport prints the
// report). Returns the exit code.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"
#include "run/Run.h"

#include <iosfwd>
#include <map>
#include <string>

namespace schedc::check {

// What the sim backend needs to know about `schedule` (parameters, storage, targets).
sim::RunSetup setupOf(const ir::Program &program, const ir::Function &schedule, const SourceManager &sources);

int runCheck(const ir::Program &program, const ir::Function &schedule, const std::map<std::string, int64_t> &overrides,
             const sim::RunOptions &options, const SourceManager &sources, DiagnosticEngine &diags, std::ostream &out);

} // namespace schedc::check
