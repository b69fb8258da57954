// Unit tests of memory/ChunkedLog.h, the append-only log a rank's events are kept in: items
// keep their address as the log grows past chunk boundaries, each is value-initialized when
// appended and destroyed exactly once, and indexing and iteration see them in order.
#include "memory/ChunkedLog.h"

#include <gtest/gtest.h>
#include <iterator>
#include <vector>

namespace schedc::memory {
namespace {

struct Counted {
  static inline int alive = 0;
  int64_t value = 0; // value-initialized: 0
  std::vector<int> payload;
  Counted() { ++alive; }
  ~Counted() { --alive; }
};

using SmallLog = ChunkedLog<Counted, 2>; // chunks of 4: many boundaries in a few items
static_assert(std::forward_iterator<SmallLog::iterator>);
static_assert(std::forward_iterator<SmallLog::const_iterator>);

TEST(ChunkedLog, ItemsStayPutAndInOrderAcrossChunks) {
  {
    SmallLog log;
    EXPECT_TRUE(log.empty());
    std::vector<const Counted *> addresses;
    for (int i = 0; i < 11; ++i) {
      Counted &c = log.emplace_back();
      EXPECT_EQ(c.value, 0);
      c.value = i;
      c.payload.assign(3, i);
      addresses.push_back(&c);
    }
    ASSERT_EQ(log.size(), 11u);
    EXPECT_EQ(Counted::alive, 11);
    EXPECT_EQ(log.back().value, 10);
    for (size_t i = 0; i < log.size(); ++i) {
      EXPECT_EQ(&log[i], addresses[i]); // appending never moved an earlier item
      EXPECT_EQ(log[i].value, static_cast<int64_t>(i));
    }
    int64_t expected = 0;
    const SmallLog &read = log;
    for (const Counted &c : read)
      EXPECT_EQ(c.value, expected++);
    EXPECT_EQ(expected, 11);
  }
  EXPECT_EQ(Counted::alive, 0); // each item destroyed once, none of the unused tail
}

} // namespace
} // namespace schedc::memory
