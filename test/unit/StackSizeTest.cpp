// Unit tests of check/StackSize: the levels of nesting on a schedule's deepest path, through
// calls, and the stack a rank gets for it.
#include "check/StackSize.h"
#include "AnalyzedText.h"
#include "engine/Fiber.h"

#include <gtest/gtest.h>

using namespace schedc;

namespace {
const ir::Function &scheduleOf(const Analyzed &a) {
  return a.program->functions[*a.program->entry];
}
uint32_t levelsOf(const Analyzed &a) {
  return check::nestingLevels(*a.program, scheduleOf(a));
}

// `p(l)` nested `depth` times in `if`s, as a procedure; the schedule calls it.
std::string nestedIfs(int depth) {
  std::string open, close;
  for (int i = 0; i < depth; ++i)
    open += "if l >= " + std::to_string(i) + " { ", close += "} ";
  return "proc p(l) { " + open + "w[l], o[l] = load(l); " + close +
         "}\n"
         "schedule s(layers = 1, batches = 1) { p(0); }\n";
}
} // namespace

TEST(StackSize, LevelsCountBlocksCallsExpressionsAndOperations) {
  Analyzed flat("schedule s(layers = 1, batches = 1) { w[0], o[0] = load(0); }");
  ASSERT_TRUE(flat.program) << flat.out.str();
  // the store's operation (1) over its argument expression (1)
  EXPECT_EQ(levelsOf(flat), 2u);
  Analyzed loop("schedule s(layers = 2, batches = 1) { for l in 0..layers { w[l], o[l] = load(l); } }");
  ASSERT_TRUE(loop.program) << loop.out.str();
  EXPECT_EQ(levelsOf(loop), 3u); // the loop's block, then the store
  Analyzed called(nestedIfs(3));
  ASSERT_TRUE(called.program) << called.out.str();
  EXPECT_EQ(levelsOf(called), 1u + 3u + 2u); // the call, three `if`s, the store
  Analyzed expression("schedule s(layers = 1, batches = 1) { let x = ((((1 + 2) * 3) - 4) + 5); }");
  ASSERT_TRUE(expression.program) << expression.out.str();
  EXPECT_EQ(levelsOf(expression), 5u); // four operators over a literal
}

TEST(StackSize, ShallowSchedulesGetSmallStacksAndDeepOnesTheDefault) {
  if (sim::kShallowStackBytes == sim::kFiberStackBytes)
    GTEST_SKIP() << "under AddressSanitizer every stack is the default's 64 MiB";
  Analyzed shallow(nestedIfs(10));
  ASSERT_TRUE(shallow.program) << shallow.out.str();
  EXPECT_EQ(check::stackBytesFor(*shallow.program, scheduleOf(shallow)), sim::kShallowStackBytes);
  // Past a quarter of the shallow stack at kBytesPerLevel: the default.
  int deep = static_cast<int>(sim::kShallowStackBytes / 4 / check::kBytesPerLevel) + 1;
  Analyzed nested(nestedIfs(deep));
  ASSERT_TRUE(nested.program) << nested.out.str();
  EXPECT_GT(levelsOf(nested) * check::kBytesPerLevel, sim::kShallowStackBytes / 4);
  EXPECT_EQ(check::stackBytesFor(*nested.program, scheduleOf(nested)), sim::kFiberStackBytes);
}
