// Tokens implementation: ANTLR positions to SourceLoc, token spellings for diagnostics.
#include "parse/Tokens.h"

#include "SchedLexer.h"
#include "antlr4-runtime.h"

namespace schedc::parse {

namespace {
uint32_t codePoints(const std::string &s) {
  uint32_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}
} // namespace

SourceLoc beginOf(const antlr4::Token *t, uint32_t file) {
  return {file, static_cast<uint32_t>(t->getLine()), static_cast<uint32_t>(t->getCharPositionInLine()) + 1};
}

SourceLoc endOf(const antlr4::Token *t, uint32_t file) {
  SourceLoc b = beginOf(t, file);
  if (t->getType() == antlr4::Token::EOF)
    return b;
  uint32_t n = codePoints(t->getText());
  return {file, b.line, b.col + (n ? n - 1 : 0)};
}

SourceRange rangeOf(const antlr4::Token *t, uint32_t file) {
  return {beginOf(t, file), endOf(t, file)};
}

SourceRange rangeOf(antlr4::ParserRuleContext *ctx, uint32_t file) {
  const antlr4::Token *stop = ctx->getStop() ? ctx->getStop() : ctx->getStart();
  // An empty rule (stop before start) covers only its first token.
  if (stop->getTokenIndex() < ctx->getStart()->getTokenIndex())
    stop = ctx->getStart();
  return {beginOf(ctx->getStart(), file), endOf(stop, file)};
}

SourceRange after(const antlr4::Token *t, uint32_t file) {
  SourceLoc e = endOf(t, file);
  e.col += 1;
  return {e, e};
}

std::string describeTokenType(size_t type, const antlr4::dfa::Vocabulary &vocabulary) {
  using L = schedc_antlr::SchedLexer;
  switch (type) {
  case antlr4::Token::EOF: return "end of file";
  case L::ID: return "identifier";
  case L::INT: return "integer";
  case L::STRING: return "string";
  default: break;
  }
  std::string lit = vocabulary.getLiteralName(type);
  if (lit.size() >= 2 && lit.front() == '\'' && lit.back() == '\'')
    return "`" + lit.substr(1, lit.size() - 2) + "`";
  return vocabulary.getDisplayName(type);
}

std::string describeToken(const antlr4::Token *t) {
  if (t->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string text = t->getText();
  if (text.size() > 32)
    text = text.substr(0, 29) + "...";
  return "`" + text + "`";
}

} // namespace schedc::parse
