// Compare — `schedc compare A.sched B.sched ...`: checks every schedule on the sim backend
// with the same -D parameters (each -D goes to the schedules that have that parameter) and
// prints one table row per schedule: verdict, ranks, step time, bubble fraction, the
// largest per-rank peak memory and the communication volume. Exit 0 when every schedule is
// correct, 1 when one is not (its diagnostics are printed above the table).
#pragma once

#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"

namespace schedc::driver {

int runCompare(const Options &opts, SourceManager &sources, DiagnosticEngine &diags);

} // namespace schedc::driver
