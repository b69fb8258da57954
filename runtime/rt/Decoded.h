// Decoded — a compiled program's description as a run reads it: its source files and
// locations (so diagnostics print exactly as `schedc check` prints them), its mesh axes, the
// sim::RunSetup, the parameters once evaluated, and the compiled entry as the body every
// rank runs. Internal to runtime/rt/.
#pragma once

#include "backend/ComputeRank.h"
#include "report/Trace.h"
#include "run/Run.h"
#include "schedc/runtime.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::rt {

// The rank this process computes for real, as the body of the run sees it.
struct LocalRank {
  backend::ComputeRank *compute = nullptr;
  int64_t rank = 0;
  std::vector<sim::Measured> *measured = nullptr; // its events, in real time
  double origin = 0;                              // the common start of every rank's clock
  bool settle = false;                            // wait for device work before timing (--trace, --draw)
};

struct Decoded {
  explicit Decoded(const schedc_program &program);

  // The parameters: -D values where `overrides` gives them, the compiled defaults for the
  // rest; nullopt when evaluating them failed (reported into `diags`).
  std::optional<std::vector<int64_t>> evaluate(const std::map<std::string, int64_t> &overrides,
                                               DiagnosticEngine &diags);
  // The value of parameter `name` once evaluated, or `otherwise`.
  int64_t parameter(const char *name, int64_t otherwise) const;
  // The body every rank runs: the compiled entry, computing data on `local`'s rank if any.
  std::function<void(sim::Rank &)> body(const LocalRank *local) const;

  const schedc_program &program;
  SourceManager sources;
  std::vector<SourceRange> locations;
  std::vector<std::string> axes;
  sim::RunSetup setup;
  std::vector<int64_t> values; // the parameters (zeros until evaluated)
};

} // namespace schedc::rt
