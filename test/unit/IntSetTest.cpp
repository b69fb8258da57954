// Unit tests of sim/IntSet.h: union and intersection agree with std::set on every shape the
// fast paths single out (either side empty, one wholly below the other, touching, and
// interleaved), and sets print like Python's with long runs shortened.
#include "sim/IntSet.h"
#include "sim/Value.h"

#include <gtest/gtest.h>
#include <set>

namespace schedc::sim {
namespace {

std::vector<int64_t> sorted(std::set<int64_t> s) {
  return {s.begin(), s.end()};
}

TEST(IntSet, UnionAndIntersectionAgreeWithStdSet) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {5}, {0, 1, 2, 3}, {4, 5, 6}, {3, 4}, {-7, 100}, {1, 3, 5, 7}, {0, 2, 4, 6, 8}, {9, 10, 11},
  };
  for (const auto &x : shapes)
    for (const auto &y : shapes) {
      IntSet a(x), b(y);
      std::set<int64_t> u(x.begin(), x.end()), i;
      u.insert(y.begin(), y.end());
      for (int64_t v : x)
        if (b.contains(v))
          i.insert(v);
      EXPECT_EQ(a.unite(b).elements(), sorted(u)) << a.str() << " | " << b.str();
      EXPECT_EQ(a.intersect(b).elements(), sorted(i)) << a.str() << " & " << b.str();
    }
}

// A copy of a set that pointers hold is a set of its own: held by its own pointers only,
// counted by one thread, whatever the original's count and counting (a copy that kept the
// original's count was never freed: LeakSanitizer found input's sets and a parallel run's
// copies of collective results leaking).
TEST(IntSet, ACopyIsHeldOnlyByItsOwnPointers) {
  SetPtr shared = makeSet(IntSet::range(0, 3));
  SetPtr again = shared;
  EXPECT_EQ(shared->holders(), 2u);
  SetPtr copy = makeSet(*shared);
  EXPECT_EQ(copy->holders(), 1u);
  EXPECT_EQ(shared->holders(), 2u);
  SetPtr ofInterned = makeSet(*singleSet(5));
  EXPECT_EQ(ofInterned->counting(), IntSet::Counting::OneThread);
  EXPECT_EQ(ofInterned->holders(), 1u);
  IntSet assigned;
  assigned = *shared;
  EXPECT_EQ(assigned.holders(), 0u);
}

TEST(IntSet, PrintsRunsShortened) {
  EXPECT_EQ(IntSet().str(), "{}");
  EXPECT_EQ(IntSet({2, 0, 1}).str(), "{0, 1, 2}");
  EXPECT_EQ(IntSet::range(0, 512).unite(IntSet::single(600)).str(), "{0, 1, ..., 511, 600}");
  // Only where it is shorter: four in a row are written out, five are not.
  EXPECT_EQ(IntSet::range(0, 4).str(), "{0, 1, 2, 3}");
  EXPECT_EQ(IntSet::range(4, 9).str(), "{4, 5, ..., 8}");
}

} // namespace
} // namespace schedc::sim
