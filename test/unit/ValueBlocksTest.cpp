// Unit tests of the values' free list (sim/Value.cpp): a new value takes the block dropped
// last, values alive at once never share a block (a list that handed a block out twice fails
// here), and values made on one thread may be dropped on another, before and after it ends.
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

// 1000 values dropped one by one, then 1000 made: each new value takes the block dropped
// last that no other took (the list is last in, first out: jemalloc's cache, which holds a
// couple of hundred blocks of a size, gives them back in another order, so this tells the
// list is there), and no two live values share a block.
TEST(ValueBlocks, ADroppedValuesBlockIsTheNextValuesAndLiveValuesKeepTheirOwn) {
  constexpr size_t kValues = 1000;
  std::vector<ValuePtr> first;
  for (size_t i = 0; i < kValues; ++i)
    first.push_back(weightOfLayer(static_cast<int64_t>(i)));
  std::vector<const Value *> dropped;
  for (ValuePtr &v : first) {
    dropped.push_back(v.get());
    v.reset();
  }
  std::vector<ValuePtr> second;
  std::set<const Value *> blocks;
  for (size_t i = 0; i < kValues; ++i) {
    second.push_back(weightOfLayer(static_cast<int64_t>(kValues + i)));
    blocks.insert(second.back().get());
  }
  EXPECT_EQ(blocks.size(), kValues) << "two live values in one block";
  for (size_t i = 0; i < kValues; ++i)
    EXPECT_EQ(second[i]->layer, static_cast<int64_t>(kValues + i));
#ifndef SCHEDC_ASAN // AddressSanitizer sees every allocation: no list there
  size_t lastInFirstOut = 0;
  for (size_t i = 0; i < kValues; ++i)
    lastInFirstOut += second[i].get() == dropped[kValues - 1 - i];
  EXPECT_EQ(lastInFirstOut, kValues) << "values did not take the blocks dropped last";
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
