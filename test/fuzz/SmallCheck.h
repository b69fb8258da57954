// SmallCheck — what the fuzz targets that run a schedule share: `schedc check` with limits
// small enough to fuzz (20 000 statements, 5 s; libFuzzer's -rss_limit_mb watches memory),
// every diagnostic formatted, and an abort where check exits with the code the docs reserve
// for compiler bugs (70), or where a check on several threads says anything else than on one.
#pragma once

#include "check/Check.h"
#include "diagnostics/Diagnostics.h"
#include "run/Run.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace schedc::fuzz {

// What a check said: its exit code, its report and its diagnostics as printed.
struct CheckOutput {
  int code = 0;
  std::string report, diagnostics;
  bool operator==(const CheckOutput &) const = default;
};

inline CheckOutput runSmallCheck(const ir::Program &program, const ir::Function &schedule,
                                 const std::map<std::string, int64_t> &params, sim::RunOptions options,
                                 const SourceManager &sources, DiagnosticEngine &diags) {
  options.limits.maxSteps = 20'000;
  options.limits.maxSeconds = 5;
  options.limits.maxMemoryMiB = 0;
  options.watchdog = false; // libFuzzer's -timeout records a run that hangs; the watchdog would end it unseen
  std::ostringstream out;
  CheckOutput said;
  said.code = check::runCheck(program, schedule, params, options, sources, diags, out);
  said.report = out.str();
  for (const Diagnostic &d : diags.diagnostics())
    said.diagnostics += diags.format(d);
  if (said.code == kExitInternal) {
    std::fprintf(stderr, "check exited %d (internal error) on this input:\n%s\n", said.code, said.report.c_str());
    std::abort();
  }
  return said;
}

// The check on one thread and on `threads`: the two must say the same, byte for byte
// (docs/checks.md#threads), or the target aborts. A run stopped at its time limit is left
// out (where it stops is the clock's).
inline void compareThreads(const ir::Program &program, const ir::Function &schedule,
                           const std::map<std::string, int64_t> &params, sim::RunOptions options,
                           const SourceManager &sources, int64_t threads) {
  options.threads = 1;
  DiagnosticEngine oneDiags(sources, nullptr);
  CheckOutput one = runSmallCheck(program, schedule, params, options, sources, oneDiags);
  options.threads = threads;
  DiagnosticEngine manyDiags(sources, nullptr);
  CheckOutput many = runSmallCheck(program, schedule, params, options, sources, manyDiags);
  bool timed = one.diagnostics.find("seconds; stopping") != std::string::npos ||
               many.diagnostics.find("seconds; stopping") != std::string::npos;
  if (one == many || timed)
    return;
  std::fprintf(stderr, "check on 1 thread and on %lld differ:\n-- exit %d\n%s%s\n-- exit %d\n%s%s\n",
               static_cast<long long>(threads), one.code, one.diagnostics.c_str(), one.report.c_str(), many.code,
               many.diagnostics.c_str(), many.report.c_str());
  std::abort();
}

} // namespace schedc::fuzz
