// CostModels — the hardware cost model a command line asks for: its transformer and its
// machine read from presets or TOML files (cost/TransformerFile.h, cost/Hardware.h), the
// --model-set and --hardware-set keys applied over them, and the schedule's `layers` taken
// from the model.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"

#include <cstdint>
#include <map>
#include <string>

namespace schedc::driver {

// Makes the hardware cost model of `opts` (when it asks for one) and points opts.costModel
// and opts.bytes at its model. Returns kExitOk, or the exit code after reporting why not: 2
// for an unknown preset or a bad setting, 4 for a file that cannot be read, 3 for a file
// that is not a valid description (located at its line and column).
int resolveCostModel(Options &opts, SourceManager &sources, DiagnosticEngine &diags);

// With the hardware cost model, a schedule's `layers` parameter is the model's layer count:
// sets it in `params` (the -D overrides) unless -D set it; reports a -D that disagrees.
// False after reporting.
bool applyModelLayers(const Options &opts, bool hasLayers, std::map<std::string, int64_t> &params,
                      DiagnosticEngine &diags);

} // namespace schedc::driver
