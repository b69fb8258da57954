// CostModels — the hardware cost model a command line asks for: its transformer and its
// machine read from presets or TOML files (cost/TransformerFile.h, cost/Hardware.h), the
// --model-set and --hardware-set keys applied over them (run/CostChoice.h), its files read
// through the SourceManager.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"
#include "run/CostChoice.h"

#include <cstdint>
#include <map>
#include <string>

namespace schedc::driver {

// Makes the hardware cost model of `opts` (when it asks for one) and points opts.costModel
// and opts.bytes at its model. Returns kExitOk, or the exit code after reporting why not: 2
// for an unknown preset or a bad setting, 4 for a file that cannot be read, 3 for a file
// that is not a valid description (located at its line and column).
int resolveCostModel(Options &opts, SourceManager &sources, DiagnosticEngine &diags);

// The reader of description files through `sources` (each file's text kept there, so that a
// problem in it can be shown at its line); with `read`, each file's id by its path.
sim::ReadText sourceReader(SourceManager &sources, std::map<std::string, uint32_t> *read = nullptr);

} // namespace schedc::driver
