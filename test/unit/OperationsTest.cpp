// The operation table (support/ops/Operations.def) as the code reads it, what the
// dispatches rely on it to say, and the internal assertion.
#include "ops/Operations.h"
#include "diagnostics/InternalError.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace schedc {
namespace {

TEST(Operations, CalledByTheirNamesAndAliasesOnly) {
  EXPECT_EQ(findOperation("forward"), OpKind::Forward);
  EXPECT_EQ(findOperation("scatterreduce"), OpKind::ReduceScatter);
  EXPECT_EQ(findOperation("reducescatter"), OpKind::ReduceScatter);
  EXPECT_FALSE(findOperation("read"));     // written as `a[i]`
  EXPECT_FALSE(findOperation("add_grad")); // written as `a + b`
  EXPECT_FALSE(findOperation("forwards"));
  std::set<std::string_view> names(operationNames().begin(), operationNames().end());
  EXPECT_EQ(names.size(), operationNames().size()) << "a name given twice";
  EXPECT_TRUE(names.count("scatterreduce"));
  EXPECT_FALSE(names.count("read"));
}

TEST(Operations, ParametersByNameWithTheirSlots) {
  EXPECT_EQ(paramInfo(param::Shard::value).kind, ParamKind::Value);
  EXPECT_EQ(paramInfo(param::Shard::value).slot, 0);
  EXPECT_EQ(paramInfo(param::Shard::shard).slot, 0); // the first integer, after the value
  EXPECT_EQ(paramInfo(param::Shard::of).slot, 1);
  EXPECT_TRUE(paramInfo(param::Load::of).optional);
  EXPECT_EQ(paramInfo(param::Load::of).defaultValue, 1);
  EXPECT_FALSE(paramInfo(param::Load::layer).optional);
  EXPECT_EQ(std::string(paramInfo(param::Send::tag).name), "tag");
}

TEST(Operations, CollectivesHaveWhatTheDispatchesReadByKind) {
  for (int k = 0; k < kOpKinds; ++k) {
    auto op = static_cast<OpKind>(k);
    const OpInfo &info = opInfo(op);
    EXPECT_LE(info.params.size(), kMaxParams);
    EXPECT_LE(info.results.size(), kMaxResults);
    if (!collectiveOf(op))
      continue;
    int values = 0, groups = 0;
    for (const ParamInfo &p : info.params) {
      values += p.kind == ParamKind::Value;
      groups += p.kind == ParamKind::Group;
    }
    EXPECT_EQ(values, 1) << info.name;
    EXPECT_EQ(groups, 1) << info.name;
    EXPECT_EQ(info.results.size(), 1u) << info.name;
  }
  EXPECT_TRUE(collectiveOf(OpKind::AllReduce));
  EXPECT_TRUE(collectiveOf(OpKind::ReduceScatter));
  EXPECT_FALSE(collectiveOf(OpKind::Send)); // point-to-point
  EXPECT_FALSE(collectiveOf(OpKind::Load));
  // Each collective's operation logs its event, and the event leads back to it.
  for (int c = 0; c < kCollectiveKinds; ++c) {
    auto kind = static_cast<CollectiveKind>(c);
    EXPECT_EQ(collectiveOf(opOf(kind)), kind);
    EXPECT_EQ(opInfo(opOf(kind)).event, eventOf(kind));
    EXPECT_EQ(collectiveOf(eventOf(kind)), kind);
  }
  EXPECT_EQ(std::string(collectiveName(CollectiveKind::ReduceScatter)), "reducescatter"); // the event: scatterreduce
  EXPECT_FALSE(collectiveOf(EventKind::Pass));
}

TEST(Operations, TheHalvesOfBackwardTakeBackwardsArguments) { // as the executors read them
  for (OpKind half : {OpKind::BackwardInput, OpKind::BackwardWeight}) {
    std::span<const ParamInfo> mine = opInfo(half).params, whole = opInfo(OpKind::Backward).params;
    ASSERT_EQ(mine.size(), whole.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      EXPECT_STREQ(mine[i].name, whole[i].name);
      EXPECT_EQ(mine[i].kind, whole[i].kind);
      EXPECT_EQ(mine[i].slot, whole[i].slot);
    }
  }
}

TEST(Operations, EventsWithTheirClasses) {
  EXPECT_EQ(opInfo(OpKind::Send).event, EventKind::Pass);
  EXPECT_EQ(opInfo(OpKind::Recv).event, EventKind::Pass);
  EXPECT_FALSE(opInfo(OpKind::Load).event);
  EXPECT_STREQ(eventName(EventKind::ReduceScatter), "scatterreduce"); // as the reference traces
  EXPECT_TRUE(isComputeEvent(EventKind::BackwardWeight));
  EXPECT_FALSE(isComputeEvent(EventKind::Update));
  EXPECT_TRUE(isCommunicationEvent(EventKind::Pass));
  EXPECT_TRUE(isCommunicationEvent(EventKind::AllGather));
  EXPECT_FALSE(isCommunicationEvent(EventKind::Loss));
}

TEST(Operations, ValueKindsInStorageClassOrder) {
  EXPECT_EQ(kValueKinds, 5);
  EXPECT_STREQ(valueKindName(ValueKind::OptState), "optimizer state");
  EXPECT_STREQ(valueKindPlural(ValueKind::ActGrad), "activation gradients");
  EXPECT_EQ(valueKindOf(SigType::WeightGrad), ValueKind::WeightGrad);
  EXPECT_FALSE(valueKindOf(SigType::Value));
  EXPECT_FALSE(valueKindOf(SigType::Set));
}

TEST(InternalErrorDeathTest, ExitsSeventyWithFileAndLine) {
  EXPECT_EXIT(SCHEDC_ASSERT(1 + 1 == 3, "arithmetic broke"), testing::ExitedWithCode(70),
              "OperationsTest.cpp:[0-9]+: internal error: arithmetic broke \\(please report this bug\\)");
  EXPECT_EXIT(SCHEDC_UNREACHABLE("no way here"), testing::ExitedWithCode(70), "internal error: no way here");
}

} // namespace
} // namespace schedc
