// Unit tests of the order in which sim::World runs its ranks (World::schedule): in rank order
// until they block, and a rank that a completed collective or an arriving message wakes runs
// next, ahead of the ranks that were already runnable, the lowest member of a group first.
// The figures never depend on this order; the speed of a run on many ranks does (a woken
// group goes on while its state is in cache).
#include "sim/World.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedc::sim {
namespace {

// Ranks 0 and 1 all-reduce over {0, 1}; ranks 2 and 3 only log what they do. Rank 1's arrival
// completes the collective: rank 0, woken by it, runs before ranks 2 and 3 have started.
TEST(Scheduling, AGroupWokenByItsCollectiveRunsBeforeRanksNotYetStarted) {
  World world(Model{1, 1, 4}, {}, Options{});
  SourceRange at;
  std::vector<std::string> order;
  world.run([&](Rank &rank) {
    std::string r = std::to_string(rank.id());
    order.push_back(r + " starts");
    if (rank.id() <= 1) {
      ValuePtr g = rank.fakeGrad(at, 0, IntSet::single(0));
      rank.collective(at, CollectiveKind::AllReduce, g, setOf(IntSet::range(0, 2)));
      order.push_back(r + " has its sum");
    }
  });
  std::vector<std::string> expected{"0 starts", "1 starts", "1 has its sum", "0 has its sum", "2 starts", "3 starts"};
  EXPECT_EQ(order, expected);
}

// Of the members a collective wakes, the lowest runs first: rank 3 arrives last and goes on;
// then 0, 1, 2 in order.
TEST(Scheduling, TheMembersAWokenCollectiveWakesRunLowestFirst) {
  World world(Model{1, 1, 4}, {}, Options{});
  SourceRange at;
  std::vector<int64_t> after;
  world.run([&](Rank &rank) {
    ValuePtr g = rank.fakeGrad(at, 0, IntSet::single(0));
    rank.collective(at, CollectiveKind::AllReduce, g, world.allRanks());
    after.push_back(rank.id());
  });
  EXPECT_EQ(after, (std::vector<int64_t>{3, 0, 1, 2}));
}

// A receiver waiting for a message runs as soon as its sender blocks, before a rank that has
// not started yet.
TEST(Scheduling, AReceiverWokenByItsMessageRunsNext) {
  World world(Model{1, 1, 3}, {}, Options{});
  SourceRange at;
  std::vector<std::string> order;
  world.run([&](Rank &rank) {
    std::string r = std::to_string(rank.id());
    order.push_back(r + " starts");
    if (rank.id() == 0) {
      rank.recv(at, 1);
      order.push_back("0 received");
    } else if (rank.id() == 1) {
      rank.send(at, 0, rank.input(at, IntSet::single(0)));
      rank.recv(at, 0); // blocks (never sent: a deadlock once rank 2 is done)
    }
  });
  std::vector<std::string> expected{"0 starts", "1 starts", "0 received", "2 starts"};
  EXPECT_EQ(order, expected);
}

} // namespace
} // namespace schedc::sim
