// Unit tests of sim/SlotDirectory.h, the names of a rank's storage slots: every name gets one
// id and keeps it, looking a name up never confuses it with another (same coordinates in
// another array or another index length, coordinates below a table's first one, far apart
// or negative), and each id gives back its name. Checked against a std::map over mixed
// shapes: dense runs, descending loops, sparse and huge coordinates, index lengths 0 to 6.
#include "sim/SlotDirectory.h"

#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace schedc::sim {
namespace {

using Name = std::pair<uint32_t, std::vector<int64_t>>;

class Checked {
public:
  uint32_t add(uint32_t array, std::vector<int64_t> index) {
    uint32_t id = dir_.findOrAdd(array, index);
    EXPECT_NE(id, SlotDirectory::kNone);
    auto [it, fresh] = ids_.try_emplace(Name{array, index}, id);
    EXPECT_EQ(it->second, id) << "a name changed its id";
    if (fresh) {
      EXPECT_TRUE(taken_.insert(id).second) << "two names got one id";
    }
    EXPECT_EQ(dir_.find(array, index), id);
    return id;
  }
  void verifyAll() const {
    EXPECT_EQ(dir_.size(), ids_.size());
    for (const auto &[name, id] : ids_) {
      EXPECT_EQ(dir_.find(name.first, name.second), id);
      StorageKey key = dir_.key(id);
      EXPECT_EQ(key.array, name.first);
      EXPECT_EQ(std::vector<int64_t>(key.index.begin(), key.index.end()), name.second);
    }
  }
  bool known(uint32_t array, const std::vector<int64_t> &index) const { return ids_.count(Name{array, index}) != 0; }
  SlotDirectory dir_;

private:
  std::map<Name, uint32_t> ids_;
  std::set<uint32_t> taken_;
};

TEST(SlotDirectory, SameCoordinatesInOtherArraysAndLengthsAreOtherSlots) {
  Checked c;
  uint32_t a = c.add(0, {1});
  EXPECT_NE(c.add(1, {1}), a);
  EXPECT_NE(c.add(0, {1, 0}), a);
  EXPECT_NE(c.add(0, {}), a);
  EXPECT_EQ(c.dir_.find(0, std::vector<int64_t>{2}), SlotDirectory::kNone);
  EXPECT_EQ(c.dir_.find(0, std::vector<int64_t>{1, 1}), SlotDirectory::kNone);
  EXPECT_EQ(c.dir_.find(7, std::vector<int64_t>{1}), SlotDirectory::kNone);
  c.verifyAll();
}

TEST(SlotDirectory, DescendingLoopsGrowTablesDownward) {
  Checked c;
  for (int64_t l = 31; l >= 0; --l)
    for (int64_t mb = 7; mb >= 0; --mb)
      c.add(2, {l, mb});
  for (int64_t l = -5; l < 40; ++l)
    for (int64_t mb = -1; mb < 9; ++mb)
      if (!c.known(2, {l, mb})) {
        EXPECT_EQ(c.dir_.find(2, std::vector<int64_t>{l, mb}), SlotDirectory::kNone) << l << ", " << mb;
      }
  c.verifyAll();
}

TEST(SlotDirectory, FarApartAndExtremeCoordinates) {
  Checked c;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  c.add(0, {0});
  c.add(0, {1'000'000'000'000}); // beside 0: kept sparse, not a table of 10^12 cells
  c.add(0, {kMax});
  c.add(0, {kMin});
  c.add(0, {-3});
  c.add(0, {kMin, kMax});
  c.add(0, {kMax, kMin});
  EXPECT_EQ(c.dir_.find(0, std::vector<int64_t>{kMax - 1}), SlotDirectory::kNone);
  EXPECT_EQ(c.dir_.find(0, std::vector<int64_t>{kMin + 1}), SlotDirectory::kNone);
  // A descending run down to the smallest coordinate: the table grows downward by as much
  // again as it spans, but never below kMin.
  for (int64_t i = 40; i >= 0; --i)
    c.add(1, {kMin + i});
  EXPECT_EQ(c.dir_.find(1, std::vector<int64_t>{kMax}), SlotDirectory::kNone);
  // And an ascending run up to the largest: never above kMax.
  for (int64_t i = 40; i >= 0; --i)
    c.add(3, {kMax - i});
  EXPECT_EQ(c.dir_.find(3, std::vector<int64_t>{kMin}), SlotDirectory::kNone);
  // Coordinates that later fill the gap join the table; the sparse ones keep their ids.
  for (int64_t i = 0; i < 100; ++i)
    c.add(0, {i});
  c.verifyAll();
}

TEST(SlotDirectory, RandomShapesAgreeWithAMap) {
  Checked c;
  std::mt19937_64 rng(16);
  for (int n = 0; n < 20000; ++n) {
    auto array = static_cast<uint32_t>(rng() % 5);
    size_t dims = rng() % 7;
    std::vector<int64_t> index;
    for (size_t d = 0; d < dims; ++d) {
      switch (rng() % 4) {
      case 0: index.push_back(static_cast<int64_t>(rng() % 8)); break;
      case 1: index.push_back(static_cast<int64_t>(rng() % 64) - 16); break;
      case 2: index.push_back(static_cast<int64_t>(rng() % 4096) * 1000); break;
      default: index.push_back(static_cast<int64_t>(rng())); break;
      }
    }
    if (rng() % 3 == 0 && !c.known(array, index))
      EXPECT_EQ(c.dir_.find(array, index), SlotDirectory::kNone);
    else
      c.add(array, index);
  }
  c.verifyAll();
}

} // namespace
} // namespace schedc::sim
