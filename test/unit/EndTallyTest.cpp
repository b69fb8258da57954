// Unit tests of sim/EndTally.h: tallies of consecutive blocks of ranks, added up in order,
// are the tally of one pass over every rank — cut anywhere, into two blocks or three.
#include "sim/EndTally.h"

#include <gtest/gtest.h>

namespace schedc::sim {
namespace {

// What one rank leaves at the end: slots still held (statement, slot index) and its updated
// weights (layer, shard count, shard; shard count 0 and differing counts included).
struct RankEnd {
  std::vector<std::pair<EndTally::Statement, int64_t>> held;
  std::vector<std::tuple<size_t, int64_t, int64_t>> weights;
};

constexpr size_t kLayers = 4;

std::vector<RankEnd> ranks() {
  std::vector<RankEnd> out(12);
  const EndTally::Statement act{1, 10, 5, int(Kind::Activation)}, grad{1, 14, 7, int(Kind::WeightGrad)},
      late{1, 20, 3, int(Kind::ActGrad)};
  for (int64_t r = 0; r < 12; ++r) {
    RankEnd &e = out[r];
    e.held.push_back({act, 32 - r % 3}); // slots out of order within a rank's block
    if (r % 2)
      e.held.push_back({grad, r});
    if (r >= 7)
      e.held.push_back({late, 0});                   // first held by a rank of a later block
    e.weights.push_back({0, 4, r % 4});              // layer 0: complete, four shards
    e.weights.push_back({1, r == 9 ? 2 : 4, r % 4}); // layer 1: one rank says 2
    e.weights.push_back({2, r == 5 ? 0 : 4, 1});     // layer 2: 4s, a count of 0, 4s
    if (r == 5)
      e.weights.push_back({3, 0, 0}); // layer 3: a count of 0, then 4s
    else if (r > 5)
      e.weights.push_back({3, 4, 1});
  }
  return out;
}

void tally(EndTally &t, const std::vector<RankEnd> &all, size_t from, size_t to) {
  for (size_t r = from; r < to; ++r) {
    for (const auto &[statement, index] : all[r].held) {
      EndTally::Leftover &l = t.leftover(statement, static_cast<Kind>(std::get<3>(statement)));
      l.note(static_cast<int64_t>(r), [index] { return StorageKey(0, SlotIndex{index}); });
    }
    for (const auto &[layer, total, shard] : all[r].weights) {
      Value w;
      w.kind = Kind::Weight;
      w.total = total;
      w.shards = makeSet(IntSet::single(shard));
      t.finals[layer].note(w);
    }
  }
}

void expectSame(const EndTally &a, const EndTally &b, const std::string &cut) {
  ASSERT_EQ(a.order, b.order) << cut;
  for (const auto &statement : a.order) {
    const EndTally::Leftover &x = a.leftovers.at(statement), &y = b.leftovers.at(statement);
    EXPECT_EQ(x.count, y.count) << cut;
    ASSERT_EQ(x.first.size(), y.first.size()) << cut;
    for (size_t i = 0; i < x.first.size(); ++i) {
      EXPECT_EQ(x.first[i].rank, y.first[i].rank) << cut;
      EXPECT_EQ(x.first[i].index, y.first[i].index) << cut;
    }
  }
  for (size_t l = 0; l < kLayers; ++l) {
    const EndTally::Final &x = a.finals[l], &y = b.finals[l];
    EXPECT_EQ(x.total, y.total) << cut << " layer " << l;
    EXPECT_EQ(x.inconsistent, y.inconsistent) << cut << " layer " << l;
    EXPECT_EQ(IntSet(x.shards).elements(), IntSet(y.shards).elements()) << cut << " layer " << l;
  }
}

TEST(EndTally, BlocksAddedUpInOrderAreOnePassOverEveryRank) {
  const std::vector<RankEnd> all = ranks();
  const size_t n = all.size();
  EndTally whole(kLayers);
  tally(whole, all, 0, n);
  // What the one pass finds, so that the cuts below compare against something that matters.
  EXPECT_EQ(whole.order.size(), 3u);
  EXPECT_EQ(whole.leftovers.at(whole.order[0]).count, n);
  EXPECT_FALSE(whole.finals[0].inconsistent);
  EXPECT_TRUE(whole.finals[1].inconsistent);
  EXPECT_TRUE(whole.finals[2].inconsistent);  // 4 then 0
  EXPECT_FALSE(whole.finals[3].inconsistent); // 0 then 4s: a count after 0 is not compared
  for (size_t cut = 0; cut <= n; ++cut)
    for (size_t second = cut; second <= n; ++second) {
      EndTally a(kLayers), b(kLayers), c(kLayers);
      tally(a, all, 0, cut);
      tally(b, all, cut, second);
      tally(c, all, second, n);
      a.add(std::move(b));
      a.add(std::move(c));
      expectSame(whole, a, "cut at " + std::to_string(cut) + " and " + std::to_string(second));
    }
}

// Layer 1's differing count on a block's first rank: found where the blocks meet.
TEST(EndTally, DifferentCountsWhereTwoBlocksMeetAreInconsistent) {
  auto weight = [](int64_t total) {
    Value w;
    w.kind = Kind::Weight;
    w.total = total;
    w.shards = makeSet(IntSet::single(0));
    return w;
  };
  EndTally a(1), b(1);
  a.finals[0].note(weight(4));
  b.finals[0].note(weight(2));
  b.finals[0].note(weight(2));
  EXPECT_FALSE(a.finals[0].inconsistent);
  EXPECT_FALSE(b.finals[0].inconsistent);
  a.add(std::move(b));
  EXPECT_TRUE(a.finals[0].inconsistent);
}

} // namespace
} // namespace schedc::sim
