// Unit tests of the diagnostic engine: rendering (caret, range, tabs, notes), counting,
// and the error limit.
#include "diagnostics/Diagnostics.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace schedc;

namespace {
struct Fixture {
  SourceManager sm;
  uint32_t file = sm.addBuffer("t.sched", "let x = foo;\n\tlet y = 1;\n");
  std::ostringstream out;
  DiagnosticEngine diags{sm, &out};
};
} // namespace

TEST(Diagnostics, RendersLocationLineAndCaret) {
  Fixture f;
  f.diags.error(SourceRange{{f.file, 1, 9}, {f.file, 1, 11}}, "unknown name `foo`");
  EXPECT_EQ(f.out.str(), "t.sched:1:9: error: unknown name `foo`\n  let x = foo;\n          ^~~\n");
  EXPECT_EQ(f.diags.errorCount(), 1u);
}

TEST(Diagnostics, KeepsTabsSoTheCaretLinesUp) {
  Fixture f;
  f.diags.warning(SourceRange{{f.file, 2, 6}, {f.file, 2, 6}}, "w");
  EXPECT_EQ(f.out.str(), "t.sched:2:6: warning: w\n  \tlet y = 1;\n  \t    ^\n");
  EXPECT_EQ(f.diags.warningCount(), 1u);
  EXPECT_FALSE(f.diags.hasErrors());
}

TEST(Diagnostics, NotesFollowTheirError) {
  Fixture f;
  f.diags.error(SourceRange{{f.file, 2, 6}}, "again").note(SourceRange{{f.file, 1, 5}}, "first here");
  std::string s = f.out.str();
  EXPECT_LT(s.find("t.sched:2:6: error: again"), s.find("t.sched:1:5: note: first here"));
  ASSERT_EQ(f.diags.diagnostics().size(), 1u);
  EXPECT_EQ(f.diags.diagnostics()[0].notes.size(), 1u);
}

TEST(Diagnostics, WithoutLocationNamesTheTool) {
  Fixture f;
  f.diags.error({}, "no schedule");
  EXPECT_EQ(f.out.str(), "schedc: error: no schedule\n");
}

TEST(Diagnostics, StopsAtTheErrorLimit) {
  Fixture f;
  f.diags.setErrorLimit(2);
  for (int i = 0; i < 5; ++i)
    f.diags.error(SourceRange{{f.file, 1, 1}}, "e" + std::to_string(i));
  EXPECT_TRUE(f.diags.limitReached());
  EXPECT_EQ(f.diags.errorCount(), 2u);
  EXPECT_NE(f.out.str().find("too many errors emitted, stopping now"), std::string::npos);
  EXPECT_EQ(f.out.str().find("e2"), std::string::npos);
}
