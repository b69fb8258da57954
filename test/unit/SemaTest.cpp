// Unit tests of sema and the IR: storage kinds, slots, the verifier catching malformed IR,
// and did-you-mean suggestions.
#include "sema/Sema.h"
#include "AnalyzedText.h"
#include "ir/IR.h"
#include "options/Define.h"
#include "parse/Parser.h"
#include "run/Run.h"
#include "sema/SemaContext.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace schedc;

TEST(Sema, InfersStorageKindsThroughCopies) {
  Analyzed a("schedule s(layers = 1, batches = 1) {\n"
             "  w2[0] = w[0];\n"
             "  w[0], o[0] = load(0);\n"
             "}\n");
  ASSERT_TRUE(a.program) << a.out.str();
  ASSERT_EQ(a.program->arrays.size(), 3u);
  for (const ir::Array &arr : a.program->arrays)
    if (arr.name == "w2" || arr.name == "w")
      EXPECT_EQ(arr.kind, ir::Type::Weight);
    else
      EXPECT_EQ(arr.kind, ir::Type::OptState);
  EXPECT_EQ(ir::verify(*a.program), "");
}

TEST(Sema, SchedulesGetParametersAsSlotsAndAnEntry) {
  Analyzed a("schedule s(layers = 2, batches = 4, ranks = batches) { let x = layers * 2; }");
  ASSERT_TRUE(a.program) << a.out.str();
  ASSERT_TRUE(a.program->entry);
  const ir::Function &f = a.program->functions[*a.program->entry];
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[2].defaultValue->op, ir::ExprOp::Var);
  EXPECT_EQ(f.params[2].defaultValue->value, 1); // `batches` is slot 1
  EXPECT_EQ(f.slotNames.size(), 4u);
}

TEST(Sema, OneMistakeReportsOnce) {
  Analyzed a("schedule s(layers = 1, batches = 1) { let x = (nope + 1) * 2 < 3; }");
  EXPECT_FALSE(a.program);
  EXPECT_EQ(a.diags.errorCount(), 1u) << a.out.str();
}

TEST(IRVerifier, CatchesMalformedIR) {
  ir::Program p;
  ir::Function f;
  f.name = "broken";
  f.isSchedule = true;
  ir::Expr bad{ir::ExprOp::Add, ir::Type::Int, 0, {ir::Expr{ir::ExprOp::Bool, ir::Type::Bool, 1, {}, {}}}, {}};
  f.body.push_back(ir::Stmt{ir::LetStmt{0, bad}, {}});
  f.slotNames = {"x"};
  p.functions.push_back(f);
  EXPECT_NE(ir::verify(p), "");
  p.functions[0].body.clear();
  p.functions[0].body.push_back(ir::Stmt{ir::LetStmt{7, ir::Expr{}}, {}});
  EXPECT_NE(ir::verify(p).find("slot out of range"), std::string::npos);
}

TEST(Suggest, FindsCloseNames) {
  EXPECT_EQ(schedc::suggest("forwrd", {"forward", "backward"}), "forward");
  EXPECT_EQ(schedc::suggest("zzz", {"forward", "backward"}), "");
}

TEST(Defines, ParsesNameAndValue) {
  std::string error;
  auto d = parseDefine("layers=-8", error);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->first, "layers");
  EXPECT_EQ(d->second, -8);
  EXPECT_FALSE(parseDefine("layers", error));
  EXPECT_FALSE(parseDefine("layers=8x", error));
  EXPECT_FALSE(parseDefine("9x=8", error));
  EXPECT_FALSE(parseDefine("x=99999999999999999999", error));
  EXPECT_NE(error.find("64 bits"), std::string::npos);
}
