// SmallCheck — what the fuzz targets that run a schedule share: `schedc check` with limits
// small enough to fuzz (20 000 statements, 5 s; libFuzzer's -rss_limit_mb watches memory),
// every diagnostic formatted, and an abort where check exits with the code the docs reserve
// for compiler bugs (70).
#pragma once

#include "check/Check.h"
#include "diagnostics/Diagnostics.h"
#include "sim/Run.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace schedc::fuzz {

inline void runSmallCheck(const ir::Program &program, const ir::Function &schedule,
                          const std::map<std::string, int64_t> &params, sim::RunOptions options,
                          const SourceManager &sources, DiagnosticEngine &diags) {
  options.limits.maxSteps = 20'000;
  options.limits.maxSeconds = 5;
  options.limits.maxMemoryMiB = 0;
  std::ostringstream out;
  int code = check::runCheck(program, schedule, params, options, sources, diags, out);
  for (const Diagnostic &d : diags.diagnostics())
    (void)diags.format(d);
  if (code == kExitInternal) {
    std::fprintf(stderr, "check exited %d (internal error) on this input:\n%s\n", code, out.str().c_str());
    std::abort();
  }
}

} // namespace schedc::fuzz
