// Unit tests of what a verification run tells a real backend to open before it computes:
// sim::World::routes (every sender -> receiver pair a message went over, received or not;
// never an invalid one) and sim::World::collectiveGroups (the members of every group a
// collective was called over). The cuda backend opens one NCCL communicator for each.
#include "engine/World.h"

#include <gtest/gtest.h>

namespace schedc::sim {
namespace {

TEST(WorldChannels, RecordsRoutesAndCollectiveGroups) {
  World world(Model{1, 1, 4}, {}, Options{});
  SourceRange at;
  world.run([&](Rank &rank) {
    ValuePtr x = rank.input(at, IntSet::single(0));
    ValuePtr g = rank.fakeGrad(at, 0, IntSet::single(0));
    int64_t r = rank.id();
    if (r == 0) {
      rank.send(at, 1, x);
      rank.send(at, 2, x, 3); // never received: still a route
      rank.recv(at, 1);
    } else if (r == 1) {
      rank.recv(at, 0);
      rank.send(at, 0, x);
    }
    if (r <= 1)
      rank.collective(at, CollectiveKind::AllReduce, g, setOf(IntSet::range(0, 2)));
    rank.collective(at, CollectiveKind::AllReduce, g, world.allRanks());
    if (r == 3)
      rank.send(at, 3, x); // to itself: an error, not a route
  });
  std::set<std::pair<int64_t, int64_t>> routes{{0, 1}, {0, 2}, {1, 0}};
  EXPECT_EQ(world.routes(), routes);
  std::vector<std::vector<int64_t>> groups{{0, 1, 2, 3}, {0, 1}};
  EXPECT_EQ(world.collectiveGroups(), groups);
  EXPECT_TRUE(world.hasErrors()); // the send to itself
}

TEST(WorldChannels, NoneWithoutMessagesOrCollectives) {
  World world(Model{1, 1, 2}, {}, Options{});
  world.run([&](Rank &rank) { rank.input(SourceRange{}, IntSet::single(rank.id())); });
  EXPECT_TRUE(world.routes().empty());
  EXPECT_TRUE(world.collectiveGroups().empty());
}

} // namespace
} // namespace schedc::sim
