// Unit tests of sim/IdMap.h, a rank's slot places by shared slot id: checked against a
// std::map for the orders ranks name ids in — one run upward (a data-parallel rank), one
// downward, a stretch of its own among other ranks' (a pipeline's: every k-th id), far apart
// and extreme ids — and entries the window comes to cover after they were hashed; and
// sim/DenseWindow.h's NearMap (a rank's micro-batch counts and updated layers) likewise.
#include "sim/IdMap.h"

#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <random>

namespace schedc::sim {
namespace {

class Checked {
public:
  void add(uint32_t id) {
    int &v = map_.findOrAdd(id);
    auto [it, fresh] = expected_.try_emplace(id, next_);
    if (fresh) {
      EXPECT_EQ(v, 0) << "a new id " << id << " has a value";
    } else {
      EXPECT_EQ(v, it->second) << "id " << id << " lost its value";
    }
    v = it->second;
    ++next_;
  }
  void verify(uint32_t from, uint32_t to) const {
    EXPECT_EQ(map_.size(), expected_.size());
    for (const auto &[id, value] : expected_) {
      const int *v = map_.find(id);
      ASSERT_NE(v, nullptr) << "id " << id << " is lost";
      EXPECT_EQ(*v, value) << "id " << id;
    }
    for (uint64_t id = from; id <= to; ++id) {
      if (!expected_.count(static_cast<uint32_t>(id))) {
        EXPECT_EQ(map_.find(static_cast<uint32_t>(id)), nullptr) << "id " << id << " was never added";
      }
    }
  }

private:
  IdMap<int> map_;
  std::map<uint32_t, int> expected_;
  int next_ = 1;
};

TEST(IdMap, UpwardDownwardAndStridedRuns) {
  Checked up, down, strided;
  for (uint32_t id = 1; id <= 5000; ++id)
    up.add(id);
  for (uint32_t id = 5000; id >= 1; --id)
    down.add(id);
  for (uint32_t id = 7; id <= 64000; id += 64) // one rank's ids among 64 ranks'
    strided.add(id);
  for (uint32_t id = 3; id <= 64000; id += 640) // named again: values kept
    strided.add(id);
  up.verify(1, 5100);
  down.verify(1, 5100);
  strided.verify(1, 64100);
}

TEST(IdMap, HashedIdsTheWindowLaterCovers) {
  Checked c;
  c.add(1000);
  c.add(1);                              // too far below: hashed
  c.add(900);                            // hashed
  for (uint32_t id = 999; id >= 2; --id) // the window grows down over both
    c.add(id);
  c.add(0xFFFFFFFFu); // the largest id, far away
  c.add(0xFFFFFFFEu);
  c.verify(1, 1100);
  c.verify(0xFFFFFF00u, 0xFFFFFFFFu);
}

TEST(IdMap, RandomOrdersAgreeWithAMap) {
  std::mt19937 rng(16);
  for (int round = 0; round < 20; ++round) {
    Checked c;
    uint32_t span = 1u << (4 + round % 12);
    for (int n = 0; n < 3000; ++n)
      c.add(1 + static_cast<uint32_t>(rng() % span));
    c.verify(1, span);
  }
}

// NearMap keeps every key's value, whether the window grows to it or it goes to the far map:
// keys up and down from the first, far ones (a poisoned value's micro-batch), the extremes.
TEST(NearMap, NearAndFarKeysAgreeWithAMap) {
  std::mt19937_64 rng(17);
  NearMap<int64_t> near;
  std::map<int64_t, int64_t> expected;
  auto add = [&](int64_t key) {
    int64_t value = static_cast<int64_t>(rng() % 1000) + 1;
    near[key] += value;
    expected[key] += value;
  };
  for (int64_t k = 100; k < 200; ++k)
    add(k);
  for (int64_t k = 99; k >= 0; --k)
    add(k);
  for (int n = 0; n < 2000; ++n)
    add(static_cast<int64_t>(rng() % 400) - 100); // around the window, some beyond it
  for (int64_t far : {int64_t{1} << 40, -(int64_t{1} << 40), std::numeric_limits<int64_t>::max(),
                      std::numeric_limits<int64_t>::min()})
    add(far);
  for (const auto &[key, value] : expected)
    EXPECT_EQ(near[key], value) << "key " << key;
}

} // namespace
} // namespace schedc::sim
