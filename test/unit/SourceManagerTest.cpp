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
