// The parse phase's own character stream and tokens (parse/Lexing.h) against ANTLR's
// stock ones: every token of every example and stdlib schedule, and of texts with
// multi-byte characters, a byte-order mark and lexical errors, must come out the same.
#include "parse/Lexing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using namespace schedc::parse;

struct Lexed {
  std::vector<std::string> tokens; // each token's fields, printed
  size_t compact = 0;              // how many were CompactTokens
};

std::string fields(const antlr4::Token &t) {
  std::ostringstream out;
  out << t.getType() << " ch" << t.getChannel() << " " << t.getLine() << ":" << t.getCharPositionInLine() << " ["
      << t.getStartIndex() << "," << t.getStopIndex() << "] #" << t.getTokenIndex() << " '" << t.getText() << "'";
  return out.str();
}

template <typename Input, typename Lexer> Lexed lex(const std::string &text) {
  Input input(text);
  Lexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream stream(&lexer);
  stream.fill();
  Lexed out;
  for (antlr4::Token *t : stream.getTokens()) {
    out.tokens.push_back(fields(*t));
    out.compact += dynamic_cast<CompactToken *>(t) != nullptr;
  }
  return out;
}

void expectSameTokens(const std::string &text, const std::string &what) {
  Lexed stock = lex<antlr4::ANTLRInputStream, schedc_antlr::SchedLexer>(text);
  Lexed compact = lex<Utf32Input, CompactLexer>(text);
  EXPECT_EQ(stock.tokens, compact.tokens) << what;
  EXPECT_EQ(stock.compact, 0u);
  // Every token but the end of file (emitted apart, as a CommonToken) is compact.
  EXPECT_EQ(compact.compact + 1, compact.tokens.size()) << what;
}

std::string readFile(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Lexing, EveryScheduleLexesAsWithAntlrsOwnStreamAndTokens) {
  const std::filesystem::path root = SCHEDC_SOURCE_DIR;
  size_t files = 0;
  for (const char *dir : {"examples/puzzles", "stdlib", "bench"})
    for (const auto &entry : std::filesystem::directory_iterator(root / dir))
      if (entry.path().extension() == ".sched") {
        expectSameTokens(readFile(entry.path()), entry.path().string());
        ++files;
      }
  EXPECT_GE(files, 20u);
}

TEST(Lexing, MultiByteCharactersBomAndErrorsLexAsWithAntlr) {
  const char *texts[] = {
      "",
      "\xEF\xBB\xBFschedule s() { let x = 1; }",                                                 // a byte-order mark
      "require(true, \"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80\"); // \xC3\xA9\n", // 2-, 3-, 4-byte
      "/* \xE2\x82\xAC */ let a = 1;\r\n\tlet b = a + 2;",
      "let x = 1 \xC2\xA7 2; $ # `", // unknown characters
      "/* never closed",
      "require(false, \"never closed",
      "act[l + 1, mb] = forward(l, act[l, mb], w[l]);",
  };
  for (const char *text : texts)
    expectSameTokens(text, text);
}

TEST(Lexing, TextOfARangeIsTheUtf8OfItsCodePoints) {
  std::string text = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80z";
  Utf32Input input(text);
  antlr4::ANTLRInputStream stock(text);
  ASSERT_EQ(input.size(), 5u);
  for (ssize_t a = 0; a < 6; ++a)
    for (ssize_t b = a - 1; b < 7; ++b)
      EXPECT_EQ(input.getText(antlr4::misc::Interval(a, b)), stock.getText(antlr4::misc::Interval(a, b)))
          << a << ".." << b;
  EXPECT_EQ(input.getText(antlr4::misc::Interval(ssize_t{-1}, ssize_t{2})), "");
}

TEST(Lexing, ACompactTokenIsUnderHalfACommonToken) {
  EXPECT_LE(sizeof(CompactToken), 40u); // 48 with the allocator's rounding
  EXPECT_LE(2 * sizeof(CompactToken), sizeof(antlr4::CommonToken));
  CompactToken t(nullptr, 5, 0, 3, 4, 1, 2);
  EXPECT_EQ(t.getTokenIndex(), static_cast<size_t>(-1)); // not yet placed in a stream
  t.setTokenIndex(7);
  EXPECT_EQ(t.getTokenIndex(), 7u);
  EXPECT_EQ(t.getText(), ""); // no input
  EXPECT_THROW(t.setText("x"), std::logic_error);
}

} // namespace
