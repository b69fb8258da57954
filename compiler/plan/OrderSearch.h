// OrderSearch — a pipeline's order of forwards (F), input-gradient halves (B) and weight-
// gradient halves (W) found for its stages' costs and an activation budget, as Qi et al.
// 2023 ("Zero Bubble Pipeline Parallelism", §3.1) find theirs with a heuristic: list
// scheduling in time order, each stage running at its clock the B that is ready (the critical
// path), else the F that is ready and fits its budget, else a pending W (a bubble filled, or
// memory given back), else waiting for the next known readiness; after the last F, the
// remaining Bs and Ws. Three W policies are tried (a W in every bubble; a W only where the
// budget or the end asks for it; each W right after its B, which under a budget of p - s is
// 1F1B's order) and the order whose own simulated step is shortest is kept.
// Stage s runs on rank s (one stage a rank, the looped placement of ZB-H1/H2). Its budget is
// k_s micro-batches in flight (from F to the end of its backward) and, in bytes, what 1F1B's
// order with that many in flight holds there: k_s micro-batches' activations before its
// first backward, then its weight gradients and the activations of k_s (k_s - 1 where no F
// follows the first backward). A B that has no room under those bytes for the output
// gradients its W will need is a whole backward instead (the PyTorch file's `B`), giving the
// activations back at once. With every backward whole the order is 1F1B's with k_s in
// flight (one of the policies below; oneFOneBOrder is 1F1B's own, which the plan checks beside
// a searched order at 1F1B's budget).
// Invariants: every stage runs every micro-batch's F once and its backward once (whole, or
// B then W), F and B in micro-batch order, W after its B; a stage's F waits for the
// previous stage's F of the same micro-batch, its B for its own F and the next stage's B;
// no stage goes past its budget.
#pragma once

#include "interop/PytorchCsv.h"

#include <cstdint>
#include <vector>

namespace schedc::plan {

struct StageCosts {
  double forward = 0, input = 0, weight = 0; // seconds of one micro-batch's F, B and W
  // Bytes one micro-batch holds on the stage: its activations, from its F to its backward's
  // end; and the gradients of its layers' outputs, which an input half keeps for its weight
  // half (from its B to its W). The stage's weight gradients, from its first backward on.
  double activations = 0, gradients = 0, weightGradients = 0;
};

struct SearchedOrder {
  std::vector<std::vector<interop::Cell>> rows; // rank s's actions, in order (stage s)
  double estimate = 0; // the step the search's own clock gives (messages as given, no collectives)
};

// The order for `costs.size()` stages and `batches` micro-batches, stage s holding at most
// `inFlight[s]` (>= 1) micro-batches, a message between stages taking `message` seconds.
SearchedOrder searchOrder(const std::vector<StageCosts> &costs, int64_t batches, const std::vector<int64_t> &inFlight,
                          double message);
// 1F1B's order (stdlib/1f1b.sched's) with `inFlight[s]` micro-batches in flight on stage s:
// min(k - 1, m) warm-up forwards, then a forward (while any is left) and a whole backward in
// turn. At k = p - s it is 1F1B itself. (Its estimate is left 0: it is not searched.)
SearchedOrder oneFOneBOrder(int64_t batches, const std::vector<int64_t> &inFlight);

} // namespace schedc::plan
