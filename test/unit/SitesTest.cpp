// Unit tests of sim/Sites.h: each distinct source range gets one id, kept when ranges that
// share a slot of the recent-id cache (same line * 31 + column, modulo its size) evict each
// other, and every id gives back its range.
#include "sim/Sites.h"

#include <gtest/gtest.h>

namespace schedc::sim {
namespace {

SourceRange range(uint32_t file, uint32_t line, uint32_t col, uint32_t endCol) {
  return SourceRange(SourceLoc{file, line, col}, SourceLoc{file, line, endCol});
}

bool same(const SourceRange &a, const SourceRange &b) {
  return a.begin == b.begin && a.end == b.end;
}

TEST(Sites, EvictedRangesKeepTheirIds) {
  Sites sites;
  // All begin where the cache slot is the same: line 1, columns 1 and 65; and line 3 col 3
  // in another file ((3 * 31 + 3) % 64 == (1 * 31 + 1) % 64).
  const SourceRange a = range(0, 1, 1, 4), b = range(0, 1, 65, 70), c = range(1, 3, 3, 9);
  const SourceRange aLonger = range(0, 1, 1, 9); // same beginning as `a`, another end
  Sites::Id ia = sites.intern(a), ib = sites.intern(b), ic = sites.intern(c), il = sites.intern(aLonger);
  EXPECT_NE(ia, ib);
  EXPECT_NE(ia, ic);
  EXPECT_NE(ib, ic);
  EXPECT_NE(ia, il);
  for (int round = 0; round < 3; ++round) { // each asks again after the others evicted it
    EXPECT_EQ(sites.intern(a), ia);
    EXPECT_EQ(sites.intern(b), ib);
    EXPECT_EQ(sites.intern(c), ic);
    EXPECT_EQ(sites.intern(aLonger), il);
  }
  EXPECT_TRUE(same(sites.range(ia), a));
  EXPECT_TRUE(same(sites.range(ib), b));
  EXPECT_TRUE(same(sites.range(ic), c));
  EXPECT_TRUE(same(sites.range(il), aLonger));
}

} // namespace
} // namespace schedc::sim
