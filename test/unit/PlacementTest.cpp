// Unit tests of time as its own layer (cost/Placement.h, cost/CostModel.h): runs made with
// sim::World's Rank API tell each rank's clock what every event waits for, and it places them.
// Under the puzzle model a rank has one clock; under a model with a stream per class (a
// test model here, with whole-number lengths so the expected times are exact) a collective
// overlaps the compute that does not need its result, compute waits for a result only where
// it uses it, a collective starts when its last member is ready, a receive when its send
// has ended, and nothing waits for a send.
#include "cost/Placement.h"
#include "engine/World.h"

#include <gtest/gtest.h>

namespace schedc::sim {
namespace {

// Compute takes one unit per micro-batch, update 1, a collective 3, a send or receive 2;
// each class on its own stream.
class StreamsModel : public cost::CostModel {
public:
  std::string_view name() const override { return "streams"; }
  bool oneStream() const override { return false; }
  Number length(const cost::Work &w) const override {
    if (isComputeEvent(w.kind))
      return Number::integer(w.microBatches);
    if (w.kind == EventKind::Update)
      return Number::integer(1);
    if (w.kind == EventKind::Loss)
      return Number::integer(0);
    return Number::integer(w.kind == EventKind::Pass ? 2 : 3);
  }
};
const StreamsModel kStreams;

Options withModel(const cost::CostModel &model) {
  Options o;
  o.costModel = &model;
  return o;
}

// A data-parallel step of a two-layer model on two ranks (rank r computes micro-batch r):
// forward, loss, backward of layer 1, its gradient all-reduced while layer 0's backward
// runs, then layer 0's gradient all-reduced and both updates. With `bucket`, DDP's bucket of
// both layers: their all-reduces one `group` after layer 0's backward.
void dataParallelStepOf(Rank &rank, bool bucket) {
  SourceRange at;
  auto [w0, o0] = rank.load(at, 0, 0, 1);
  auto [w1, o1] = rank.load(at, 1, 0, 1);
  ValuePtr x = rank.input(at, IntSet::single(rank.id()));
  ValuePtr a1 = rank.forward(at, 0, x, w0);
  ValuePtr a2 = rank.forward(at, 1, a1, w1);
  ValuePtr g2 = rank.loss(at, a2);
  auto [gw1, ga1] = rank.backward(at, 1, a1, g2, w1);
  ValuePtr summed1 = bucket ? gw1 : rank.collective(at, CollectiveKind::AllReduce, gw1, rank.allRanks());
  ValuePtr gw0 = rank.backward(at, 0, x, ga1, w0).first;
  if (bucket) {
    rank.group(at, true);
    summed1 = rank.collective(at, CollectiveKind::AllReduce, gw1, rank.allRanks());
  }
  ValuePtr summed0 = rank.collective(at, CollectiveKind::AllReduce, gw0, rank.allRanks());
  if (bucket)
    rank.group(at, false);
  rank.store(0, {1}, rank.update(at, 1, summed1, w1, o1).first, at);
  rank.store(0, {0}, rank.update(at, 0, summed0, w0, o0).first, at);
}
void dataParallelStep(Rank &rank) {
  dataParallelStepOf(rank, false);
}

std::vector<std::string> times(const World &world, int64_t rank) {
  std::vector<std::string> out;
  for (const Event &e : world.events(rank))
    out.push_back(std::string(eventName(e.kind)) + "@" + e.start.str() + "+" + e.length.str() + ":" +
                  cost::streamName(e.stream));
  return out;
}

TEST(Placement, PuzzleRunsEveryEventOfARankOnOneClock) {
  World world(Model{2, 2, 2}, {{"weights", Kind::Weight}}, Options{});
  world.run(dataParallelStep);
  std::vector<std::string> expected{"forward@0+1:compute",       "forward@1+1:compute",     "loss@2+0:compute",
                                    "backward@2+1:compute",      "allreduce@3+0.3:compute", "backward@3.3+1:compute",
                                    "allreduce@4.3+0.3:compute", "update@4.6+0.5:compute",  "update@5.1+0.5:compute"};
  EXPECT_EQ(times(world, 0), expected);
  EXPECT_EQ(times(world, 1), expected);
  EXPECT_FALSE(world.hasErrors());
}

TEST(Placement, CollectiveOverlapsComputeThatDoesNotNeedIt) {
  World world(Model{2, 2, 2}, {{"weights", Kind::Weight}}, withModel(kStreams));
  world.run(dataParallelStep);
  // Layer 1's all-reduce waits for its backward (its operand); layer 0's backward does not
  // wait for the all-reduce; layer 0's all-reduce waits for the collectives stream; each
  // update waits for its all-reduced gradient.
  std::vector<std::string> expected{"forward@0+1:compute",       "forward@1+1:compute",       "loss@2+0:compute",
                                    "backward@2+1:compute",      "allreduce@3+3:collectives", "backward@3+1:compute",
                                    "allreduce@6+3:collectives", "update@6+1:compute",        "update@9+1:compute"};
  EXPECT_EQ(times(world, 0), expected);
  EXPECT_FALSE(world.hasErrors());
}

TEST(Placement, CollectiveStartsWhenItsLastMemberIsReady) {
  World world(Model{1, 2, 2}, {}, withModel(kStreams));
  world.run([](Rank &rank) {
    SourceRange at;
    auto [w, o] = rank.load(at, 0, 0, 1);
    ValuePtr x = rank.input(at, IntSet::range(0, rank.id() == 1 ? 2 : 1)); // rank 1 computes longer
    ValuePtr a = rank.forward(at, 0, x, w);
    ValuePtr g = rank.fakeGrad(at, 0, {});
    ValuePtr gw = rank.backward(at, 0, x, rank.loss(at, a), w).first;
    rank.collective(at, CollectiveKind::AllReduce, gw, rank.allRanks());
    rank.collective(at, CollectiveKind::AllReduce, g, rank.allRanks()); // made at no cost
  });
  // Rank 0's gradient is made at 2, rank 1's at 4: the first all-reduce starts at 4 on
  // both; the second waits only for the collectives stream.
  EXPECT_EQ(times(world, 0)[3], "allreduce@4+3:collectives");
  EXPECT_EQ(times(world, 1)[3], "allreduce@4+3:collectives");
  EXPECT_EQ(times(world, 0)[4], "allreduce@7+3:collectives");
}

// A coalesced call: StreamsModel's 3 for the first collective, 1 for each one joining it.
class CoalescingModel : public StreamsModel {
public:
  void coalescedLengths(std::span<const cost::Work> call, std::span<Number> lengths) const override {
    for (size_t i = 0; i < call.size(); ++i)
      lengths[i] = i == 0 ? length(call[i]) : Number::integer(1);
  }
};
const CoalescingModel kCoalescing;

// DDP's bucket: the two layers' all-reduces in one `group` after layer 0's backward. The call
// starts when its last operand is made (layer 0's gradient, at 4), not at layer 1's (3), and
// is one call: 3 for the first, 1 for the one joining it; both end, for what waits for them,
// when the call does; the updates wait for that.
TEST(Placement, AGroupsCollectivesAreOneCallThatWaitsForAllItsOperands) {
  World world(Model{2, 2, 2}, {{"weights", Kind::Weight}}, withModel(kCoalescing));
  world.run([](Rank &rank) { dataParallelStepOf(rank, true); });
  std::vector<std::string> expected{"forward@0+1:compute",       "forward@1+1:compute",  "loss@2+0:compute",
                                    "backward@2+1:compute",      "backward@3+1:compute", "allreduce@4+3:collectives",
                                    "allreduce@7+1:collectives", "update@8+1:compute",   "update@9+1:compute"};
  EXPECT_EQ(times(world, 0), expected);
  EXPECT_FALSE(world.hasErrors());
}

// A group's collectives are one call: another kind, or another set of ranks, cannot join it;
// refused, it still joins its own collective (the run ends, nobody waits).
TEST(Placement, AGroupsCollectivesShareKindAndRanks) {
  for (bool otherRanks : {false, true}) {
    World world(Model{1, 2, 2}, {}, withModel(kCoalescing));
    world.run([otherRanks](Rank &rank) {
      SourceRange at;
      rank.group(at, true);
      rank.collective(at, CollectiveKind::AllReduce, rank.fakeGrad(at, 0, {}), rank.allRanks());
      rank.collective(at, otherRanks ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter,
                      rank.fakeGrad(at, 0, {}),
                      otherRanks ? rank.rangeGroup(rank.id(), rank.id() + 1) : rank.allRanks());
      rank.group(at, false);
    });
    ASSERT_TRUE(world.hasErrors());
    std::string message = world.diagnostics().front().message;
    EXPECT_NE(message.find(otherRanks ? "allreduce over rank" : "reducescatter over all ranks"), std::string::npos)
        << message;
    EXPECT_NE(message.find("cannot join its allreduce over all ranks"), std::string::npos) << message;
    EXPECT_TRUE(world.completed()) << message;
  }
}

TEST(Placement, ReceiveWaitsForItsSendAndNothingWaitsForASend) {
  World world(Model{2, 1, 2}, {}, withModel(kStreams));
  world.run([](Rank &rank) {
    SourceRange at;
    if (rank.id() == 0) {
      auto [w, o] = rank.load(at, 0, 0, 1);
      ValuePtr x = rank.input(at, IntSet::single(0));
      ValuePtr a = rank.forward(at, 0, x, w);
      rank.send(at, 1, a);
      rank.forward(at, 0, x, w); // does not wait for the send
    } else {
      auto [w, o] = rank.load(at, 1, 0, 1);
      rank.forward(at, 1, rank.input(at, IntSet::single(0)), w); // an error (layer), still timed
      ValuePtr a = rank.recv(at, 0);
      rank.forward(at, 1, a, w); // waits for the received value
    }
  });
  EXPECT_EQ(times(world, 0),
            (std::vector<std::string>{"forward@0+1:compute", "pass@1+2:point-to-point", "forward@1+1:compute"}));
  EXPECT_EQ(times(world, 1),
            (std::vector<std::string>{"forward@0+1:compute", "pass@3+2:point-to-point", "forward@5+1:compute"}));
  EXPECT_EQ(world.events(0)[1].flow, world.events(1)[1].flow);
}

// Python's max keeps its first argument on ties: a rank whose clock is the integer 2 joins a
// collective whose members are ready at 2.0 and starts it at the integer 2.
TEST(Placement, TiesKeepTheRanksOwnTime) {
  cost::RankClock rank0(cost::puzzleCost()), rank1(cost::puzzleCost());
  rank0.place({.kind = EventKind::Forward, .microBatches = 2}, {});       // 0 to 2
  rank1.place({.kind = EventKind::BackwardInput, .microBatches = 4}, {}); // 0 to 2.0
  cost::CallReady call;
  for (const cost::RankClock *member : {&rank0, &rank1})
    call.join(member->ready(EventKind::AllGather, {}));
  EXPECT_EQ(call.time().str(), "2");
  cost::Placed on0 = rank0.place({.kind = EventKind::AllGather}, {}, cost::AlsoWaits::call(call.time()));
  cost::Placed on1 = rank1.place({.kind = EventKind::AllGather}, {}, cost::AlsoWaits::call(call.time()));
  EXPECT_EQ(on0.start.str(), "2");
  EXPECT_EQ(on1.start.str(), "2.0");
  EXPECT_EQ(on0.length.str(), "0.3");
  // A receive keeps its send's end on a tie (max(send end, ready)).
  cost::Placed received = rank0.place({.kind = EventKind::Pass}, {}, cost::AlsoWaits::message(Number::real(2.3)));
  EXPECT_EQ(received.start.str(), "2.3");
}

// An event waits for the end of the event that made its operand however long ago that was,
// and for nothing on another stream it does not use.
TEST(Placement, ClockKeepsEveryEventsEnd) {
  cost::RankClock clock(kStreams);
  cost::Placed first = clock.place({.kind = EventKind::AllReduce}, {}); // 0 to 3 on collectives
  for (int i = 0; i < 600; ++i)                                         // past a chunk of ends
    clock.place({.kind = EventKind::Forward, .microBatches = 0}, {});
  EXPECT_EQ(first.stream, cost::Stream::Collectives);
  EXPECT_EQ(clock.end(0).str(), "3");
  cost::Producers madeByFirst = cost::Producers::of(cost::Stream::Collectives, 0);
  EXPECT_EQ(clock.place({.kind = EventKind::Forward, .microBatches = 1}, madeByFirst).start.str(), "3");
  EXPECT_EQ(clock.place({.kind = EventKind::Forward, .microBatches = 1}, {}).start.str(), "4");
  EXPECT_EQ(clock.lastEnd().str(), "5");
}

// A run that keeps no events reports the same figures as one that does.
TEST(Placement, FiguresDoNotNeedTheEvents) {
  for (const cost::CostModel *model : {&cost::puzzleCost(), static_cast<const cost::CostModel *>(&kStreams)}) {
    Options keep = withModel(*model), drop = withModel(*model);
    drop.keepEvents = false;
    World kept(Model{2, 2, 2}, {{"weights", Kind::Weight}}, keep);
    World dropped(Model{2, 2, 2}, {{"weights", Kind::Weight}}, drop);
    kept.run(dataParallelStep);
    dropped.run(dataParallelStep);
    Report a = kept.report(), b = dropped.report();
    EXPECT_EQ(a.events, 18u);
    EXPECT_EQ(b.events, a.events);
    EXPECT_EQ(b.makespan.str(), a.makespan.str());
    EXPECT_EQ(b.timesteps.str(), a.timesteps.str());
    EXPECT_EQ(b.maxMemory.str(), a.maxMemory.str());
    EXPECT_EQ(b.maxMemoryTime.str(), a.maxMemoryTime.str());
    EXPECT_EQ(b.bubble, a.bubble);
    EXPECT_EQ(b.communicationVolume, a.communicationVolume);
    EXPECT_EQ(a.makespan.str(), model == &kStreams ? "10" : "5.6");
    EXPECT_EQ(a.ranks[1].lastStart.str(), kept.events(1).back().start.str());
  }
}

TEST(Placement, CostModelsByName) {
  EXPECT_EQ(cost::costModelNames(), "puzzle, compute-only, equal-phases");
  ASSERT_NE(cost::findCostModel("compute-only"), nullptr);
  EXPECT_EQ(cost::findCostModel("compute-only")->length({.kind = EventKind::AllReduce}).str(), "0");
  EXPECT_EQ(cost::findCostModel("puzzle"), &cost::puzzleCost());
  EXPECT_EQ(cost::findCostModel("hardware"), nullptr);
}

// The zero-bubble papers' times: F = B = W, a whole backward B + W, communication free; a
// tensor-parallel part computes its share.
TEST(Placement, EqualPhases) {
  const cost::CostModel *model = cost::findCostModel("equal-phases");
  ASSERT_NE(model, nullptr);
  auto length = [model](EventKind kind, int64_t microBatches, int16_t parts = 1) {
    return model->length({.kind = kind, .tensorParts = parts, .microBatches = microBatches}).str();
  };
  EXPECT_EQ(length(EventKind::Forward, 1), "1");
  EXPECT_EQ(length(EventKind::BackwardInput, 1), "1");
  EXPECT_EQ(length(EventKind::BackwardWeight, 3), "3");
  EXPECT_EQ(length(EventKind::Backward, 2), "4");
  EXPECT_EQ(length(EventKind::Backward, 1, 2), "1.0");
  EXPECT_EQ(length(EventKind::Forward, 1, 2), "0.5");
  EXPECT_EQ(length(EventKind::AllReduce, 1), "0");
  EXPECT_EQ(length(EventKind::Pass, 1), "0");
  EXPECT_EQ(length(EventKind::Update, 0), "0.5");
  EXPECT_TRUE(model->oneStream());
}

} // namespace
} // namespace schedc::sim
