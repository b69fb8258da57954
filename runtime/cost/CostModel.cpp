// The puzzle, compute-only and equal-phases cost models. Their lengths keep Python's int/float-ness: forward
// and backward lengths are integers, the rest are doubles, as in the puzzle library, so the
// figures print digit for digit as it prints them (SEMANTICS.md, "Printing").
#include "cost/CostModel.h"

#include "diagnostics/InternalError.h"

#include <algorithm>

namespace schedc::cost {

namespace {

class PuzzleCost : public CostModel {
public:
  std::string_view name() const override { return "puzzle"; }
  bool oneStream() const override { return true; }
  Number length(const Work &w) const override {
    switch (w.kind) {
      SCHEDC_COLLECTIVE_EVENT_CASES return Number::real(0.3); // every collective, the all-to-all too
    // A tensor-parallel part of a layer computes its share of it; a side of a mixture-of-experts
    // layer half of it (the experts on their share of the dispatch group's tokens).
    case EventKind::Forward:
    case EventKind::Backward:
      return w.tensorParts == 1 && w.half == LayerHalf::Whole
                 ? Number::integer(w.microBatches)
                 : Number::real(static_cast<double>(w.microBatches) * halfShare(w) / w.tensorParts);
    // The two halves of a split backward take half of its time each, so their sum is backward's.
    case EventKind::BackwardInput:
    case EventKind::BackwardWeight:
      return Number::real(static_cast<double>(w.microBatches) * halfShare(w) / 2 / w.tensorParts);
    case EventKind::Loss: return Number::integer(0);
    case EventKind::Update: return Number::real(0.5);
    case EventKind::Pass:
    case EventKind::Offload: // a copy between memory tiers, priced as a send
    case EventKind::Prefetch: return Number::real(0.2);
    }
    SCHEDC_UNREACHABLE("an event the puzzle cost model has no length for");
  }

protected:
  // The puzzle's mixture-of-experts layer (its convention; docs/costs.md): half dense, half
  // routed experts, in time as in memory, and the experts' side computes a 1/groupSize share
  // of its micro-batches' tokens (balanced routing).
  static double halfShare(const Work &w) {
    switch (w.half) {
    case LayerHalf::Whole: return 1;
    case LayerHalf::Dense: return 0.5;
    case LayerHalf::Experts: return 0.5 / std::max(1, w.groupSize);
    }
    SCHEDC_UNREACHABLE("a side of a layer without its share");
  }
};

class ComputeOnlyCost : public PuzzleCost {
public:
  std::string_view name() const override { return "compute-only"; }
  Number length(const Work &w) const override {
    return isCommunicationEvent(w.kind) || isTransferEvent(w.kind) ? Number::integer(0) : PuzzleCost::length(w);
  }
};

// The zero-bubble papers' idealisation (Qi et al. 2023, "assuming T_F = T_B = T_W"): a
// forward, an input-gradient half and a weight-gradient half take one step each (so a whole
// backward two) per micro-batch, and communication is free. Under it their bubble figures —
// ZB-V's zero bubble, ZB-H1's third of 1F1B's — can be checked as published.
class EqualPhasesCost : public ComputeOnlyCost {
public:
  std::string_view name() const override { return "equal-phases"; }
  Number length(const Work &w) const override {
    double parts = static_cast<double>(w.tensorParts);
    switch (w.kind) {
    case EventKind::Forward:
    case EventKind::BackwardInput:
    case EventKind::BackwardWeight:
      return w.tensorParts == 1 && w.half == LayerHalf::Whole
                 ? Number::integer(w.microBatches)
                 : Number::real(static_cast<double>(w.microBatches) * halfShare(w) / parts);
    case EventKind::Backward:
      return w.tensorParts == 1 && w.half == LayerHalf::Whole
                 ? Number::integer(2 * w.microBatches)
                 : Number::real(2.0 * static_cast<double>(w.microBatches) * halfShare(w) / parts);
    case EventKind::Loss:
    case EventKind::Update: SCHEDC_COLLECTIVE_EVENT_CASES
    case EventKind::Pass:
    case EventKind::Offload:
    case EventKind::Prefetch: return ComputeOnlyCost::length(w);
    }
    SCHEDC_UNREACHABLE("an event the equal-phases cost model has no length for");
  }
};

const PuzzleCost kPuzzle;
const ComputeOnlyCost kComputeOnly;
const EqualPhasesCost kEqualPhases;
const CostModel *const kModels[] = {&kPuzzle, &kComputeOnly, &kEqualPhases};

} // namespace

const CostModel *findCostModel(std::string_view name) {
  for (const CostModel *m : kModels)
    if (m->name() == name)
      return m;
  return nullptr;
}

std::string costModelNames() {
  std::string names;
  for (const CostModel *m : kModels)
    names += (names.empty() ? "" : ", ") + std::string(m->name());
  return names;
}

const CostModel &puzzleCost() {
  return kPuzzle;
}

} // namespace schedc::cost
