// Unit tests of the values' free list (sim/Value.cpp): values alive at once never share a
// block (a list that handed a block out twice fails here), dropped values' blocks are reused
// (jemalloc's cache would too: this is not what tells the list is there), and values made on
// one thread may be dropped on another, before and after it ends.
#include "sim/Value.h"

#include "memory/Sanitizer.h"

#include <gtest/gtest.h>
#include <set>
#include <thread>
#include <vector>

namespace schedc::sim {
namespace {

ValuePtr weightOfLayer(int64_t layer) {
  Value v;
  v.kind = Kind::Weight;
  v.layer = layer;
  v.shards = singleSet(0);
  v.batches = emptySet();
  return makeValue(std::move(v));
}

TEST(ValueBlocks, ADroppedValuesBlockIsReusedAndLiveValuesKeepTheirOwn) {
  constexpr int kValues = 1000;
  std::vector<ValuePtr> first;
  std::set<const Value *> blocks;
  for (int i = 0; i < kValues; ++i) {
    first.push_back(weightOfLayer(i));
    blocks.insert(first.back().get());
  }
  ASSERT_EQ(blocks.size(), size_t{kValues});
  first.clear();
  std::vector<ValuePtr> second;
  std::set<const Value *> reused;
  for (int i = 0; i < kValues; ++i) {
    second.push_back(weightOfLayer(kValues + i));
    reused.insert(second.back().get());
  }
  EXPECT_EQ(reused.size(), size_t{kValues}) << "two live values in one block";
  for (int i = 0; i < kValues; ++i)
    EXPECT_EQ(second[static_cast<size_t>(i)]->layer, kValues + i);
#ifndef SCHEDC_ASAN
  for (const Value *v : reused)
    EXPECT_TRUE(blocks.count(v)) << "a value took a fresh block while dropped ones were kept";
#endif
}

TEST(ValueBlocks, ValuesCrossThreads) {
  std::vector<ValuePtr> made;
  std::thread t([&] {
    for (int i = 0; i < 100; ++i)
      made.push_back(weightOfLayer(i));
    std::vector<ValuePtr> dropped;
    for (int i = 0; i < 100; ++i)
      dropped.push_back(weightOfLayer(i)); // dropped here: this thread's list, given back at its end
  });
  t.join();
  ASSERT_EQ(made.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(made[static_cast<size_t>(i)]->layer, i);
  made.clear(); // made there, dropped here
  EXPECT_EQ(weightOfLayer(7)->layer, 7);
}

} // namespace
} // namespace schedc::sim
