// Unit tests of the order in which sim::World runs its ranks (World::schedule): in rank order
// until they block, and a rank that a completed collective or an arriving message wakes runs
// next, ahead of the ranks that were already runnable, the member of a group that arrived
// last first.
// The figures never depend on this order; the speed of a run on many ranks does (a woken
// group goes on while its state is in cache).
#include "engine/World.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace schedc::sim {
namespace {

// What `ranks` ranks do, in the order they do it: each logs "N starts", then runs `body`
// (which logs what it does next).
std::vector<std::string> orderOf(int64_t ranks, const std::function<void(Rank &, std::vector<std::string> &)> &body) {
  World world(Model{1, 1, ranks}, {}, Options{});
  std::vector<std::string> order;
  world.run([&](Rank &rank) {
    order.push_back(std::to_string(rank.id()) + " starts");
    body(rank, order);
  });
  return order;
}

// Ranks 0 and 1 all-reduce over {0, 1}; ranks 2 and 3 only log what they do. Rank 1's arrival
// completes the collective: rank 0, woken by it, runs before ranks 2 and 3 have started.
TEST(Scheduling, AGroupWokenByItsCollectiveRunsBeforeRanksNotYetStarted) {
  std::vector<std::string> order = orderOf(4, [](Rank &rank, std::vector<std::string> &log) {
    if (rank.id() <= 1) {
      SourceRange at;
      ValuePtr g = rank.fakeGrad(at, 0, IntSet::single(0));
      rank.collective(at, CollectiveKind::AllReduce, g, setOf(IntSet::range(0, 2)));
      log.push_back(std::to_string(rank.id()) + " has its sum");
    }
  });
  std::vector<std::string> expected{"0 starts", "1 starts", "1 has its sum", "0 has its sum", "2 starts", "3 starts"};
  EXPECT_EQ(order, expected);
}

// Of the members a collective wakes, the one that arrived last runs first (the likeliest to
// be in cache), so that rounds of all-reduces over every rank go back and forth: in the first,
// ranks 0, 1, 2 wait in order and rank 3 completes it and goes on, then 2, 1, 0 run; in the
// second, 3, 2, 1 wait and rank 0 completes it, then 1, 2, 3 run.
TEST(Scheduling, TheMembersAWokenCollectiveWakesRunLastArrivedFirst) {
  World world(Model{1, 1, 4}, {}, Options{});
  SourceRange at;
  std::vector<int64_t> after;
  world.run([&](Rank &rank) {
    for (int round = 0; round < 2; ++round) {
      ValuePtr g = rank.fakeGrad(at, 0, IntSet::single(0));
      rank.collective(at, CollectiveKind::AllReduce, g, world.allRanks());
      after.push_back(rank.id());
    }
  });
  EXPECT_EQ(after, (std::vector<int64_t>{3, 2, 1, 0, 0, 1, 2, 3}));
}

// A receiver waiting for a message runs as soon as its sender blocks, before a rank that has
// not started yet.
TEST(Scheduling, AReceiverWokenByItsMessageRunsNext) {
  std::vector<std::string> order = orderOf(3, [](Rank &rank, std::vector<std::string> &log) {
    SourceRange at;
    if (rank.id() == 0) {
      rank.recv(at, 1);
      log.push_back("0 received");
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
