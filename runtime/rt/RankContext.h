// RankContext — what a `schedc_rank *` points to: the sim Rank the compiled code runs on,
// the values of its current statement, its reference-counted sets, and the program's
// locations. Internal to runtime/rt/.
#pragma once

#include "backend/ComputeRank.h"
#include "engine/Execute.h"
#include "engine/World.h"
#include "report/Trace.h"
#include "run/Run.h"
#include "schedc/runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace schedc::rt {

using sim::kMaxSetSize;

struct RankContext {
  sim::Rank *rank = nullptr; // null while parameters are evaluated
  // The real backend (cpu or cuda), on the fiber of the rank this process computes (else
  // null): every result then gets its real data.
  backend::ComputeRank *compute = nullptr;
  // On the computing rank: what each event really took (seconds since `origin`).
  std::vector<sim::Measured> *measured = nullptr;
  double origin = 0;
  bool settle = false; // wait for each call's device work before taking its time (--trace, --draw)
  // True when the run goes on and this rank computes data.
  bool computing() const { return compute && !rank->cancelled(); }
  const std::vector<SourceRange> &locations;
  const std::vector<std::string> &axes;
  DiagnosticEngine *paramDiags = nullptr; // while parameters are evaluated
  bool paramsFailed = false;

  std::vector<sim::ValuePtr> temps;
  struct SetEntry {
    bool isRange = false;
    int64_t lo = 0, hi = 0;
    std::vector<int64_t> building; // explicit elements as added
    sim::SetPtr frozen;            // the elements, once used
    int32_t refs = 0;
  };
  std::vector<SetEntry> sets; // handle h is sets[h - 1]
  std::vector<schedc_set> freeSets;

  RankContext(const std::vector<SourceRange> &locs, const std::vector<std::string> &axisNames)
      : locations(locs), axes(axisNames) {}

  SourceRange at(uint32_t loc) const;
  schedc_value keep(sim::ValuePtr v);
  schedc_set newSet(SetEntry e);
  SetEntry &set(schedc_set h) { return sets[static_cast<size_t>(h - 1)]; }
  const sim::IntSet &elements(schedc_set h, SourceRange at) { return *frozen(h, at); }
  // The same, shared: made once per set, on its first use.
  const sim::SetPtr &frozen(schedc_set h, SourceRange at);
  void tooLarge(int64_t n, SourceRange at);
  // Seconds on a steady clock.
  static double now();
  // The arguments of `op` from compiled code's operands (sets and groups as their members).
  sim::Operands operands(OpKind op, const schedc_operand *args);
  sim::SetPtr group(const schedc_operand &g);
  // A run-time error that stops the run (or fails the parameters).
  void fail(SourceRange at, const std::string &message);
};

// Times an ABI call on the computing rank: the event the call logs (at most one) gets the
// call's real start and duration.
class RealTime {
public:
  explicit RealTime(RankContext &c) : c_(c) {
    if (c_.measured) {
      before_ = c_.rank->eventsLogged();
      if (before_ == 0 && c_.compute)
        c_.compute->beforeFirstEvent();
      start_ = RankContext::now();
    }
  }
  ~RealTime() {
    if (!c_.measured || c_.rank->eventsLogged() <= before_)
      return;
    if (c_.settle && c_.compute)
      c_.compute->settle();
    double end = RankContext::now();
    c_.measured->resize(c_.rank->eventsLogged());
    (*c_.measured)[before_] = sim::Measured{start_ - c_.origin, end - start_, 0};
  }

private:
  RankContext &c_;
  size_t before_ = 0;
  double start_ = 0;
};

} // namespace schedc::rt
