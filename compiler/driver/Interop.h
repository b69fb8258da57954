// Interop — the import and export subcommands: PyTorch pipeline schedule files (CSV) to a
// .sched file, and a checked schedule to such a file (interop/).
#pragma once

#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"
#include "ir/IR.h"
#include "run/Run.h"

#include <map>
#include <string>

namespace schedc::driver {

// `schedc import FILE.csv [-o FILE.sched]`. Returns the exit code.
int runImport(const Options &opts, SourceManager &sources, DiagnosticEngine &diags);

// `schedc export FILE [-o FILE.csv] [--comms]`: checks the schedule (with `params`, under the
// run options check would use) and, if it is a correct step, writes it. Returns the exit code.
int runExport(const Options &opts, sim::RunOptions run, const ir::Program &program, const ir::Function &schedule,
              const std::map<std::string, int64_t> &params, SourceManager &sources, DiagnosticEngine &diags);

} // namespace schedc::driver
