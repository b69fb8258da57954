// OrderSearch implementation: one list scheduler in global time order. Each round every
// stage proposes its next step and the time it could start it from what is known (an
// event not yet scheduled ends after every start still to come, so waiting on it is waiting
// on nothing known); the earliest proposal is committed, and the rest propose again.
#include "plan/OrderSearch.h"

#include "diagnostics/InternalError.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace schedc::plan {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Stage {
  double clock = 0, held = 0; // its clock, and the bytes it holds
  double ceiling = 0;         // the most bytes it may hold (1F1B's with its micro-batches in flight)
  int64_t nextForward = 0, nextInput = 0, inFlight = 0;
  bool gradientsMade = false; // its first backward ran: its weight gradients are held
  std::deque<int64_t> pendingWeights;
};

struct Proposal {
  interop::ActionType type = interop::ActionType::Forward;
  double start = kNever;
};

// Where a W goes: in every bubble; only where the budget or the end asks for one; nowhere,
// every backward whole (1F1B's order, greedily placed).
enum class WeightPolicy : uint8_t { InBubbles, WhenNeeded, WholeBackwards };

SearchedOrder simulate(const std::vector<StageCosts> &costs, int64_t batches, const std::vector<int64_t> &budget,
                       double message, WeightPolicy policy) {
  const size_t p = costs.size();
  const auto m = static_cast<size_t>(batches);
  std::vector<std::vector<double>> forwardEnd(p, std::vector<double>(m, kNever)),
      inputEnd(p, std::vector<double>(m, kNever));
  std::vector<Stage> stages(p);
  for (size_t s = 0; s < p; ++s) { // 1F1B's bytes with k in flight: k before its first backward,
                                   // then k (k - 1 where no F follows it) and the weight gradients
    auto k = static_cast<double>(std::min(budget[s], batches));
    double after = (budget[s] < batches ? k : k - 1) * costs[s].activations + costs[s].weightGradients;
    stages[s].ceiling = std::max(k * costs[s].activations, after);
  }
  SearchedOrder order;
  order.rows.resize(p);

  auto propose = [&](size_t s) {
    const Stage &st = stages[s];
    Proposal none;
    double inputReady = kNever, forwardReady = kNever;
    if (st.nextInput < st.nextForward) {
      auto j = static_cast<size_t>(st.nextInput);
      inputReady = s + 1 == p ? forwardEnd[s][j] : inputEnd[s + 1][j] + message;
    }
    bool roomForForward = st.inFlight < budget[s] && (st.held + costs[s].activations <= st.ceiling || st.inFlight == 0);
    if (st.nextForward < batches && roomForForward)
      forwardReady = s == 0 ? 0 : forwardEnd[s - 1][static_cast<size_t>(st.nextForward)] + message;
    bool weight = !st.pendingWeights.empty();
    double now = st.clock;
    if (inputReady <= now)
      return Proposal{interop::ActionType::BackwardInput, now};
    if (forwardReady <= now)
      return Proposal{interop::ActionType::Forward, now};
    // Nothing ready now: a W fills the bubble (one policy), or only where memory or the end
    // asks for one (the other); else the step that becomes ready first, where it is known.
    bool weightNeeded = (st.nextForward < batches && !roomForForward) || st.nextForward == batches ||
                        std::min(inputReady, forwardReady) == kNever;
    if (weight && (policy == WeightPolicy::InBubbles || weightNeeded))
      return Proposal{interop::ActionType::BackwardWeight, now};
    if (inputReady <= forwardReady && inputReady < kNever)
      return Proposal{interop::ActionType::BackwardInput, inputReady};
    if (forwardReady < kNever)
      return Proposal{interop::ActionType::Forward, forwardReady};
    return none;
  };

  size_t left = 3 * p * m; // every F, B and W; a whole backward counts for a B and its W
  while (left > 0) {
    size_t chosen = p;
    Proposal best;
    for (size_t s = 0; s < p; ++s) {
      Proposal proposal = propose(s);
      if (proposal.start < best.start) {
        best = proposal;
        chosen = s;
      }
    }
    if (chosen == p) // nothing can ever run: the last stage can always start a forward when
                     // it holds nothing, and each stage above it after the one below (OrderSearch.h)
      SCHEDC_UNREACHABLE("a searched order in which no stage can go on");
    Stage &st = stages[chosen];
    int64_t j = 0;
    double length = 0;
    --left;
    if (best.type == interop::ActionType::Forward) {
      j = st.nextForward++;
      ++st.inFlight;
      st.held += costs[chosen].activations;
      length = costs[chosen].forward;
      forwardEnd[chosen][static_cast<size_t>(j)] = best.start + length;
    } else if (best.type == interop::ActionType::BackwardInput) {
      j = st.nextInput++;
      length = costs[chosen].input;
      if (!st.gradientsMade) {
        st.gradientsMade = true;
        st.held += costs[chosen].weightGradients;
      }
      // No room for the gradients its W would need (or 1F1B's policy): the whole backward.
      if (policy == WeightPolicy::WholeBackwards || st.held + costs[chosen].gradients > st.ceiling) {
        best.type = interop::ActionType::Backward;
        length += costs[chosen].weight;
        st.held -= costs[chosen].activations;
        --st.inFlight;
        --left;
      } else {
        st.pendingWeights.push_back(j);
        st.held += costs[chosen].gradients;
      }
      inputEnd[chosen][static_cast<size_t>(j)] = best.start + length; // its input gradient, sent
    } else if (best.type == interop::ActionType::BackwardWeight) {
      j = st.pendingWeights.front();
      st.pendingWeights.pop_front();
      st.held -= costs[chosen].activations + costs[chosen].gradients;
      --st.inFlight;
      length = costs[chosen].weight;
    } else {
      SCHEDC_UNREACHABLE("a searched order's step that is not F, B or W");
    }
    st.clock = best.start + length;
    interop::Cell cell;
    cell.actions.push_back(interop::makeAction(static_cast<int64_t>(chosen), best.type, j));
    order.rows[chosen].push_back(cell);
    order.estimate = std::max(order.estimate, st.clock);
  }
  return order;
}

} // namespace

SearchedOrder oneFOneBOrder(int64_t batches, const std::vector<int64_t> &inFlight) {
  SearchedOrder order;
  for (size_t s = 0; s < inFlight.size(); ++s) {
    std::vector<interop::Cell> row;
    auto add = [&](interop::ActionType type, int64_t j) {
      interop::Cell cell;
      cell.actions.push_back(interop::makeAction(static_cast<int64_t>(s), type, j));
      row.push_back(cell);
    };
    int64_t warmUp = std::min(inFlight[s] - 1, batches);
    for (int64_t j = 0; j < warmUp; ++j)
      add(interop::ActionType::Forward, j);
    for (int64_t j = 0; j < batches; ++j) {
      if (warmUp + j < batches)
        add(interop::ActionType::Forward, warmUp + j);
      add(interop::ActionType::Backward, j);
    }
    order.rows.push_back(std::move(row));
  }
  return order;
}

SearchedOrder searchOrder(const std::vector<StageCosts> &costs, int64_t batches, const std::vector<int64_t> &budget,
                          double message) {
  SearchedOrder best;
  best.estimate = kNever;
  for (WeightPolicy policy : {WeightPolicy::InBubbles, WeightPolicy::WhenNeeded, WeightPolicy::WholeBackwards}) {
    SearchedOrder order = simulate(costs, batches, budget, message, policy);
    if (order.estimate < best.estimate)
      best = std::move(order);
  }
  return best;
}

} // namespace schedc::plan
