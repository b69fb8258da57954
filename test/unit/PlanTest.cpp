// Unit tests of `schedc plan`'s search space (plan/Space.h) and pipeline-order search
// (plan/OrderSearch.h): the invariants their headers state, over grids of problems and
// random stage costs.
#include "plan/OrderSearch.h"
#include "plan/Space.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace schedc;
using namespace schedc::plan;

namespace {

Problem problemOf(int64_t accelerators, int64_t batch, int64_t layers) {
  Problem p;
  p.accelerators = accelerators;
  p.globalBatch = batch;
  p.perNode = 8;
  p.layers = layers;
  p.modelExperts = 8; // a mixture-of-experts model: moe's groups are enumerated too
  p.denseLayers = 1;
  for (const Family &f : families())
    p.families.push_back(&f);
  return p;
}

} // namespace

TEST(PlanSpace, EveryConfigurationUsesEveryAcceleratorAndTheWholeBatch) {
  for (int64_t n : {1, 2, 4, 8, 12, 16, 64})
    for (int64_t batch : {1, 8, 12, 64})
      for (int64_t layers : {4, 12, 96}) {
        Problem problem = problemOf(n, batch, layers);
        std::set<std::string> seen;
        for (const Candidate &c : enumerate(problem)) {
          SCOPED_TRACE(c.describe());
          EXPECT_EQ(c.settings.tensorParallel * c.stages * c.replicas, n);
          EXPECT_EQ(8 % c.settings.tensorParallel, 0); // within a node
          EXPECT_EQ(c.batches * c.settings.microBatch, batch);
          EXPECT_EQ(c.batches % c.replicas, 0);
          EXPECT_EQ(layers % (c.stages * c.chunks * (c.vShape() ? 2 : 1)), 0);
          EXPECT_FALSE(c.settings.sequenceParallel && c.settings.tensorParallel == 1);
          switch (c.family->layout) {
          case Layout::Pipeline: EXPECT_TRUE(c.stages >= 2 && c.replicas == 1); break;
          case Layout::Mesh: EXPECT_FALSE(c.replicas == 1 && c.chunks == 1); break; // 1f1b's run
          case Layout::DataParallel: EXPECT_EQ(c.stages, 1); break;
          case Layout::ExpertMesh: // groups of e >= 2 replicas, whole experts a slice, at t = 1
            EXPECT_TRUE(c.experts >= 2 && c.replicas % c.experts == 0 && problem.modelExperts % c.experts == 0);
            EXPECT_EQ(c.settings.tensorParallel, 1);
            EXPECT_EQ(c.defines().at("dense_layers"), problem.denseLayers);
            if (c.family->minPerPipeline) { // dualpipev_moe: DualPipeV's 2p on each pipeline
              EXPECT_GE(c.batches / c.replicas, c.family->minBatchesPerStage * c.stages);
            }
            break;
          }
          if (c.family->layout != Layout::ExpertMesh) {
            EXPECT_EQ(c.experts, 1);
          }
          // DDP's buckets: 1, 2, 4, ... below the layers, and all of them; 1 elsewhere.
          if (c.family->buckets) {
            EXPECT_TRUE(c.bucket == layers || (c.bucket < layers && (c.bucket & (c.bucket - 1)) == 0)) << c.bucket;
            EXPECT_EQ(c.defines().at("bucket"), c.bucket);
          } else {
            EXPECT_EQ(c.bucket, 1);
          }
          EXPECT_GE(c.batches, c.family->minBatchesPerStage * c.stages);
          EXPECT_TRUE(seen.insert(c.describe()).second) << "enumerated twice";
        }
      }
}

TEST(PlanSpace, StagesHoldEveryLayerOnce) {
  for (const Candidate &c : enumerate(problemOf(16, 32, 48))) {
    std::vector<int> held(48, 0);
    for (int64_t s = 0; s < c.stages; ++s)
      for (const auto &[begin, end] : c.stageChunks(s, 48))
        for (int64_t l = begin; l < end; ++l)
          ++held[static_cast<size_t>(l)];
    for (int h : held)
      ASSERT_EQ(h, 1) << c.describe();
  }
}

TEST(PlanSpace, FixedDimensionsStayFixed) {
  Problem problem = problemOf(16, 32, 48);
  problem.tensorParallel = 4;
  problem.recompute = cost::Recompute::Full;
  problem.microBatch = 2;
  std::vector<Candidate> all = enumerate(problem);
  ASSERT_FALSE(all.empty());
  for (const Candidate &c : all) {
    EXPECT_EQ(c.settings.tensorParallel, 4);
    EXPECT_EQ(c.settings.recompute, cost::Recompute::Full);
    EXPECT_EQ(c.settings.microBatch, 2);
  }
}

TEST(PlanSpace, ModelSettingsSayOnlyWhatDiffersFromTheModel) {
  Settings model{2, 1, true, cost::Recompute::Full}; // a model file's own
  Settings same = model;
  EXPECT_TRUE(same.modelSettings({}, model).empty());
  Settings other{1, 4, false, cost::Recompute::None};
  EXPECT_EQ(other.modelSettings({}, model), (std::vector<std::string>{"tensor_parallel=1", "sequence_parallel=false",
                                                                      "recompute=none", "micro_batch=4"}));
  EXPECT_EQ(other.modelSettings({"recompute", "micro_batch"}, model),
            (std::vector<std::string>{"tensor_parallel=1", "sequence_parallel=false"}));
}

namespace {

// Replays `order` against the invariants of plan/OrderSearch.h: every micro-batch's F once and
// its backward once (whole, or B then W), F and B in micro-batch order, W after its B, at most
// `inFlight[s]` micro-batches in flight.
void expectValidOrder(const SearchedOrder &order, int64_t batches, const std::vector<int64_t> &inFlight) {
  using interop::ActionType;
  ASSERT_EQ(order.rows.size(), inFlight.size());
  for (size_t s = 0; s < order.rows.size(); ++s) {
    int64_t nextForward = 0, nextInput = 0, held = 0;
    std::set<int64_t> pending;
    for (const interop::Cell &cell : order.rows[s]) {
      ASSERT_EQ(cell.actions.size(), 1u);
      const interop::Action &a = cell.actions[0];
      ASSERT_EQ(a.stage, static_cast<int32_t>(s));
      if (a.type == ActionType::Forward) {
        ASSERT_EQ(a.microBatch, nextForward++);
        ASSERT_LE(++held, inFlight[s]) << "stage " << s;
      } else if (a.type == ActionType::BackwardInput || a.type == ActionType::Backward) {
        ASSERT_EQ(a.microBatch, nextInput++);
        ASSERT_LT(a.microBatch, nextForward);
        if (a.type == ActionType::BackwardInput)
          pending.insert(a.microBatch);
        else
          --held;
      } else {
        ASSERT_EQ(a.type, ActionType::BackwardWeight);
        ASSERT_EQ(pending.erase(a.microBatch), 1u) << "a W without its B";
        --held;
      }
    }
    EXPECT_EQ(nextForward, batches);
    EXPECT_EQ(nextInput, batches);
    EXPECT_TRUE(pending.empty());
    EXPECT_EQ(held, 0);
  }
}

} // namespace

TEST(OrderSearch, OrdersAreValidForRandomCostsAndBudgets) {
  std::mt19937 random(48);
  std::uniform_real_distribution<double> seconds(0.1, 3), bytes(0.5, 4);
  for (int trial = 0; trial < 300; ++trial) {
    auto p = static_cast<int64_t>(2 + trial % 7);
    int64_t m = 1 + static_cast<int64_t>(random() % 24);
    std::vector<StageCosts> costs(static_cast<size_t>(p));
    for (StageCosts &c : costs)
      c = StageCosts{seconds(random), seconds(random),   seconds(random),
                     bytes(random),   bytes(random) / 8, bytes(random) * 2};
    int64_t budget = p + static_cast<int64_t>(random() % static_cast<unsigned>(p + 1));
    std::vector<int64_t> inFlight;
    for (int64_t s = 0; s < p; ++s)
      inFlight.push_back(std::max<int64_t>(1, budget - s));
    SCOPED_TRACE(testing::Message() << "p=" << p << " m=" << m << " budget=" << budget);
    SearchedOrder searched = searchOrder(costs, m, inFlight, 0.01);
    EXPECT_LT(searched.estimate, 1e300) << "no order";
    expectValidOrder(searched, m, inFlight);
    expectValidOrder(oneFOneBOrder(m, inFlight), m, inFlight);
  }
}

TEST(OrderSearch, OneFOneBOrderIsStdlibOneFOneB) {
  // stdlib/1f1b.sched, stage s of p: min(p - s - 1, m) warm-up forwards, then a forward (while
  // any is left) and a backward in turn.
  SearchedOrder order = oneFOneBOrder(4, {3, 2, 1});
  auto row = [&](size_t s) { return interop::writeActionTable({order.rows[s]}); };
  EXPECT_EQ(row(0), "0F0,0F1,0F2,0B0,0F3,0B1,0B2,0B3\n");
  EXPECT_EQ(row(1), "1F0,1F1,1B0,1F2,1B1,1F3,1B2,1B3\n");
  EXPECT_EQ(row(2), "2F0,2B0,2F1,2B1,2F2,2B2,2F3,2B3\n");
}

TEST(OrderSearch, SplitsBackwardsWhereMemoryAllows) {
  // Equal costs, a slow weight half: with room, Ws fill the bubbles and the order's own clock
  // beats 1F1B's bubble (m + p - 1)(F + B + W); every backward whole gives 1F1B's.
  std::vector<StageCosts> costs(4, StageCosts{1, 1, 1, 1, 0.1, 0.5});
  std::vector<int64_t> inFlight{4, 3, 2, 1};
  SearchedOrder searched = searchOrder(costs, 8, inFlight, 0);
  EXPECT_LT(searched.estimate, (8 + 4 - 1) * 3.0);
  bool split = false;
  for (const auto &row : searched.rows)
    for (const interop::Cell &c : row)
      split |= c.actions[0].type == interop::ActionType::BackwardWeight;
  EXPECT_TRUE(split);
}
