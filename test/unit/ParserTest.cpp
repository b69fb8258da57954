// Unit tests of the parse phase through its public entry point: AST shape and ranges,
// recovery (several errors, one per bad statement), and the limits.
#include "parse/Parser.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace schedc;

namespace {
struct Parsed {
  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diags{sm, &out};
  std::unique_ptr<ast::Module> module;
  explicit Parsed(const std::string &text) { module = parseModule(sm.addBuffer("t.sched", text), sm, diags); }
};
} // namespace

TEST(Parser, BuildsTheAstWithRanges) {
  Parsed p("schedule s(layers = 2, batches = 1) {\n  act[0] = input({0});\n}\n");
  ASSERT_TRUE(p.module);
  ASSERT_EQ(p.module->functions.size(), 1u);
  const ast::Function &f = *p.module->functions[0];
  EXPECT_TRUE(f.isSchedule);
  EXPECT_EQ(f.params.size(), 2u);
  ASSERT_EQ(f.body->stmts.size(), 1u);
  const auto *assign = f.body->stmts[0]->dyn<ast::AssignStmt>();
  ASSERT_TRUE(assign);
  EXPECT_EQ(assign->range.begin, (SourceLoc{1, 2, 3}));
  EXPECT_EQ(assign->range.end, (SourceLoc{1, 2, 22})); // the `;` belongs to the statement
  const auto *call = assign->value->dyn<ast::CallExpr>();
  ASSERT_TRUE(call);
  EXPECT_EQ(call->callee, "input");
}

TEST(Parser, ParenthesesKeepTheirRange) {
  Parsed p("schedule s(layers = (1 + 2), batches = 1) {}");
  ASSERT_TRUE(p.module);
  const ast::Expr &e = *p.module->functions[0]->params[0].defaultValue;
  EXPECT_EQ(e.range.begin.col, 21u);
  EXPECT_EQ(e.range.end.col, 27u);
}

TEST(Parser, ColumnsCountCodePoints) {
  // `$` is the 9th character of its line but the 10th byte (`é` is two bytes).
  Parsed p("/* \xC3\xA9 */ $");
  EXPECT_FALSE(p.module);
  EXPECT_NE(p.out.str().find("t.sched:1:9: error: unexpected character `$`"), std::string::npos) << p.out.str();
}

TEST(Parser, RecoversAtStatementBoundaries) {
  Parsed p("schedule s(layers = 1, batches = 1) {\n  let a = ;\n  let b = 1\n  let c = 2;\n  let d = (;\n}\n");
  EXPECT_FALSE(p.module);
  EXPECT_EQ(p.diags.errorCount(), 3u) << p.out.str();
}

TEST(Parser, RejectsTooDeepNesting) {
  std::string deep = "schedule s(layers = " + std::string(300, '(') + "1" + std::string(300, ')') + ", batches = 1) {}";
  Parsed p(deep);
  EXPECT_FALSE(p.module);
  EXPECT_NE(p.out.str().find("nesting is deeper than the limit of 256 levels"), std::string::npos);
}

TEST(Parser, RejectsInvalidUtf8WithItsPosition) {
  Parsed p("schedule s() {\n  let \xFF = 1;\n}");
  EXPECT_FALSE(p.module);
  EXPECT_NE(p.out.str().find("t.sched:2:7: error: invalid UTF-8"), std::string::npos) << p.out.str();
}

TEST(Parser, EmptyFileIsAnEmptyModule) {
  Parsed p("");
  ASSERT_TRUE(p.module);
  EXPECT_TRUE(p.module->functions.empty());
}
