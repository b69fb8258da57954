// SharedOptions — the options that `schedc check/draw/run/compare` and compiled programs both
// take, each read by one function so that both accept and refuse them alike: -D, --events,
// --trace, the byte model's (--hidden, --tokens, --optimizer, --precision; Bytes.h), the
// limits' (--max-steps, --time-limit, --memory-limit; Budget.h), the cost model's
// (--cost-model, --model, --hardware, --model-set, --hardware-set; resolved by
// run/CostChoice.h), --no-warn, --overlap, --threads and --p2p. Both keep them in one
// SharedOptions, handed on whole.
#pragma once

#include "engine/Budget.h"
#include "engine/WorldOptions.h"
#include "options/ArgumentList.h"
#include "sim/Bytes.h"
#include "sim/PointToPoint.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::sim {

extern const char *const kWarningsHelp;
extern const char *const kCostModelHelp; // --cost-model, --model, --hardware and their -set

// The default of --threads: the environment's SCHEDC_THREADS (the same values), or auto.
// Returns what is wrong with SCHEDC_THREADS ("" if nothing).
std::string defaultThreads(unsigned &threads);

// The shared options' values, as read (RunSettings: what a World is made with).
struct SharedOptions : RunSettings {
  SharedOptions() { limits = defaultLimits(); }
  std::vector<std::string> defines; // -D NAME=VALUE, checked against the schedule's parameters (Run.h)
  std::string eventsFile;           // --events=FILE: every event as CSV
  std::string traceFile;            // --trace=FILE: a Chrome trace of the run
  std::optional<PointToPoint> p2p;  // --p2p; unset: the schedule's own (RunSetup::p2p)
  // The hardware cost model (hardwareCost: --cost-model=hardware, or any of --model,
  // --hardware and their -set): what to read (a preset's name or a TOML file) and the
  // KEY=VALUE settings over it; made by resolveCostModel (run/CostChoice.h), which owns it
  // here and points costModel at it.
  bool hardwareCost = false;
  std::string model, hardware;                              // --model=, --hardware=
  std::vector<std::string> modelSettings, hardwareSettings; // --model-set=K=V, --hardware-set=K=V
  std::shared_ptr<const cost::CostModel> ownedCostModel;
};

// If the current argument is one of those options, reads its value into `options` (a bad or
// missing value: `error`, unless already set) and returns the flag; else "".
std::string readSharedOption(ArgumentList &args, SharedOptions &options, std::string &error);

// What is wrong with the cost model's options together ("" if nothing).
std::string checkCostOptions(const SharedOptions &options);

} // namespace schedc::sim
