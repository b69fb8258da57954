// Run — one run of a schedule on the sim backend, from parameters to the printed report.
// `schedc check` (with the IR interpreter as the rank body) and compiled schedules (with
// the compiled code as the body) both go through here, so they print the same report, the
// same diagnostics and the same events. Also here: `-D name=value` handling and the model
// size from the parameters, shared for the same reason.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "engine/World.h"
#include "run/SharedOptions.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::sim {

// The most ranks a simulated run may have, and the largest layer or batch count.
constexpr int64_t kMaxRanks = 65536;
constexpr int64_t kMaxModelSize = int64_t(1) << 24;
// The largest set a schedule may build (elements), in check's interpreter and in compiled
// programs alike; loops over ranges never build one.
constexpr int64_t kMaxSetSize = int64_t(1) << 24;

struct ParamSpec {
  std::string name;
  bool hasDefault = true;
  SourceRange range;
};

// What a run needs to know about the schedule.
struct RunSetup {
  std::string schedule;
  std::string file;
  std::vector<ParamSpec> params;
  std::vector<ArrayInfo> arrays;
  std::optional<int64_t> targetSteps, targetMemory;
  SourceRange scheduleAt;
  // Each rank's fiber stack: the default (compiled programs), or less for a program whose
  // nesting the interpreter can bound (check/StackSize.h).
  size_t stackBytes = kFiberStackBytes;
  PointToPoint p2p = PointToPoint::Tagged; // the schedule's own (`@p2p`), unless RunOptions::p2p says
};

struct CheckResult;

// A run's options: the command line's shared options (SharedOptions), and where and how its
// results are written.
struct RunOptions : SharedOptions {
  bool json = false;
  std::string timelineFile; // if set: the timeline picture (SVG, or HTML when timelineHtml)
  bool timelineHtml = false;
  // Called after every rank has run, before the report is printed (the cpu backend adds
  // its measured memory here and writes the final weights). Returns an error message or "".
  std::function<std::string(const World &, CheckResult &)> afterRun;
  // afterRun reads the events (World::events); they are kept anyway for the files above.
  bool keepEvents = false;
  bool recordTransfers = false; // and what each send and receive moved (Rank::transfers)
  TagMeaning tagMeaning;        // Options::tagMeaning
  std::string reading;          // an imported file's: how its actions were read (CheckResult::reading)
  // The process exits after this run: its World is left to the exit, not torn down (freeing
  // every event and value one by one is measurable on a wide run: docs/performance.md).
  bool lastRun = false;
  bool stopRanksAtRepeatedErrors = true; // Options::stopRanksAtRepeatedErrors
  // --time-limit also held by a timer (run/Watchdog.h); off under a fuzzer, whose own timeout
  // records a run that hangs.
  bool watchdog = true;
};

// Checks `defines` (raw -D texts) against the parameters; the overrides by name, or
// nullopt after reporting every problem.
std::optional<std::map<std::string, int64_t>>
resolveDefines(const RunSetup &setup, const std::vector<std::string> &defines, DiagnosticEngine &diags);
// Whether the schedule has a parameter `name`.
bool hasParameter(const RunSetup &setup, const std::string &name);

// Runs `body` on every rank with the evaluated parameter `values` (nullopt: evaluating
// them failed, already reported), reports what the run found into `diags`, writes the
// events if asked, and prints the report (text or JSON) on `out`. Returns the exit code.
int runAndReport(const RunSetup &setup, const std::optional<std::vector<int64_t>> &values, const RunOptions &options,
                 const std::function<void(Rank &)> &body, const SourceManager &sources, DiagnosticEngine &diags,
                 std::ostream &out);

// The JSON document for a run that never started (front-end or command-line errors).
std::string invalidJson(const std::string &schedule, const std::string &file, const DiagnosticEngine &diags,
                        const SourceManager &sources);

} // namespace schedc::sim
