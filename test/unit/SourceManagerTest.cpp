// Unit tests of the SourceManager: line lookup, CRLF handling, UTF-8 validation, limits.
#include "diagnostics/SourceManager.h"

#include <gtest/gtest.h>

using namespace schedc;

TEST(SourceManager, LinesAreOneBasedAndStripTerminators) {
  SourceManager sm;
  uint32_t f = sm.addBuffer("t.sched", "first\r\nsecond\nthird");
  EXPECT_EQ(sm.lineText(f, 1), "first");
  EXPECT_EQ(sm.lineText(f, 2), "second");
  EXPECT_EQ(sm.lineText(f, 3), "third");
  EXPECT_EQ(sm.lineText(f, 4), "");
  EXPECT_EQ(sm.lineText(f, 0), "");
}

TEST(SourceManager, MissingFileAndDirectoryAreErrors) {
  SourceManager sm;
  std::string error;
  EXPECT_FALSE(sm.load("/nonexistent/file.sched", error));
  EXPECT_NE(error.find("No such file"), std::string::npos);
  EXPECT_FALSE(sm.load("/", error));
  EXPECT_EQ(error, "is a directory");
}

TEST(SourceManager, FileIdZeroIsReserved) {
  SourceManager sm;
  EXPECT_EQ(sm.addBuffer("a", "x"), 1u);
  EXPECT_FALSE(SourceLoc{}.valid());
}

TEST(SourceManager, DerivedTextIsShownWhereItCameFrom) {
  SourceManager sm;
  uint32_t csv = sm.addBuffer("s.csv", "0F0,0B0\n1F0,1B0\n");
  SourceRange cell{{csv, 2, 5}, {csv, 2, 7}};
  uint32_t made = sm.addDerived("s.csv.sched", "header\nline from the cell\nunmapped\n", {SourceRange(), cell});
  SourceRange onLine2{{made, 2, 10}, {made, 2, 12}};
  EXPECT_EQ(sm.shown(onLine2).begin, cell.begin);
  EXPECT_EQ(sm.shown(onLine2).end, cell.end);
  EXPECT_EQ(sm.where(onLine2), "s.csv:2:5");
  SourceRange onLine1{{made, 1, 3}}; // an invalid origin: shown as it is
  EXPECT_EQ(sm.where(onLine1), "s.csv.sched:1:3");
  SourceRange pastOrigins{{made, 3, 1}}; // no origin recorded
  EXPECT_EQ(sm.where(pastOrigins), "s.csv.sched:3:1");
  EXPECT_EQ(sm.where(SourceRange()), "");
  EXPECT_EQ(sm.where(cell), "s.csv:2:5"); // ordinary text is shown as it is
}

TEST(Utf8, AcceptsValidText) {
  EXPECT_EQ(findInvalidUtf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(findInvalidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::string_view::npos);
}

TEST(Utf8, FindsTheFirstBadByte) {
  EXPECT_EQ(findInvalidUtf8("ab\xFF"), 2u);
  EXPECT_EQ(findInvalidUtf8("ab\xC3"), 2u);           // truncated sequence
  EXPECT_EQ(findInvalidUtf8("\xC0\x80"), 0u);         // overlong NUL
  EXPECT_EQ(findInvalidUtf8("x\xED\xA0\x80"), 1u);    // surrogate
  EXPECT_EQ(findInvalidUtf8("\xF4\x90\x80\x80"), 0u); // past U+10FFFF
}

TEST(SourceRange, CoverSpansBoth) {
  SourceRange a{{1, 2, 5}, {1, 2, 7}}, b{{1, 3, 1}, {1, 3, 4}};
  SourceRange c = SourceRange::cover(b, a);
  EXPECT_EQ(c.begin, (SourceLoc{1, 2, 5}));
  EXPECT_EQ(c.end, (SourceLoc{1, 3, 4}));
}
