// Plan — `schedc plan --model=M --hardware=H --gpus=N --global-batch=B`: the fastest verified
// configuration that fits (docs/plan.md). The configurations are plan/Space.h's over the
// stdlib schedules; each is bounded (plan/Bounds.h), the survivors checked by the same
// check as `schedc check` (in-process, on the machine's cores), and the top K printed with
// the Pareto front of step against peak memory and the winner's `schedc check` command line
// (with -o, the winner's .sched with its parameters fixed; with --export, its PyTorch
// schedule CSV). Exit 0 with a winner, 1 when no configuration is correct and fits, 2 for
// a bad command line, as check's codes otherwise.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"

namespace schedc::driver {

int runPlan(const Options &opts, SourceManager &sources, DiagnosticEngine &diags);

} // namespace schedc::driver
