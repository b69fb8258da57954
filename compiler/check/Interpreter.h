// Interpreter — runs a schedule's typed IR on one rank of a sim::World: integer, boolean
// and set expressions are evaluated here; every operation on training values, storage
// access and communication is a call into the sim backend's Rank API (the same calls a
// compiled schedule makes). Integer errors (division by zero, overflow) and limits (a set
// too large to build) stop the run with a diagnostic at the expression.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "engine/World.h"
#include "ir/IR.h"
#include "run/Run.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::check {

using sim::kMaxSetSize; // the largest set a schedule may build (run/Run.h)

// Evaluates the schedule's parameters (defaults in order, with `overrides` from -D; every
// parameter without a default must have one, as sim::resolveDefines makes sure).
// Returns one value per parameter, or nullopt after reporting an error.
std::optional<std::vector<int64_t>> evaluateParameters(const ir::Function &schedule,
                                                       const std::map<std::string, int64_t> &overrides,
                                                       DiagnosticEngine &diags);

// Runs `schedule` (an entry of `program`) on `rank`.
void runRank(const ir::Program &program, const ir::Function &schedule, const std::vector<int64_t> &params,
             sim::Rank &rank);

} // namespace schedc::check
