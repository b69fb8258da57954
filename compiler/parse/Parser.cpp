// Parser — the parse phase's pipeline: check the bytes (UTF-8), lex, check the tokens
// (unknown characters, unterminated comments and strings, nesting and complexity limits),
// parse with statement-level error recovery, then convert the tree to the AST.
#include "parse/Parser.h"

#include "SchedLexer.h"
#include "SchedParser.h"
#include "antlr4-runtime.h"
#include "parse/Lexing.h"
#include "parse/ParseTreeToAST.h"
#include "parse/SyntaxErrors.h"
#include "parse/Tokens.h"

#include <cstdio>

namespace schedc {

namespace {

using L = schedc_antlr::SchedLexer;

SourceLoc locationOfByte(const std::string &text, size_t offset, uint32_t file) {
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++col;
    }
  }
  return {file, line, col};
}

std::string showChar(const std::string &text) {
  auto c = static_cast<unsigned char>(text[0]);
  if (text.size() == 1 && (c < 0x20 || c == 0x7F)) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", c);
    return buf;
  }
  return "`" + text + "`";
}

// Reports lexical errors and enforces the limits. Returns false if anything was reported.
bool checkTokens(const std::vector<antlr4::Token *> &tokens, uint32_t file, DiagnosticEngine &diags) {
  bool ok = true;
  int depth = 0;
  int operators = 0;
  bool tooComplexReported = false;
  for (size_t i = 0; i < tokens.size() && !diags.limitReached(); ++i) {
    antlr4::Token *t = tokens[i];
    switch (t->getType()) {
    case L::ERROR_CHAR: {
      // One diagnostic for a run of unknown characters on one line.
      size_t j = i;
      while (j + 1 < tokens.size() && tokens[j + 1]->getType() == L::ERROR_CHAR &&
             tokens[j + 1]->getLine() == t->getLine())
        ++j;
      SourceRange r{parse::beginOf(t, file), parse::endOf(tokens[j], file)};
      diags.error(r, j == i ? "unexpected character " + showChar(t->getText()) + " in source"
                            : "unexpected characters in source, starting with " + showChar(t->getText()));
      ok = false;
      i = j;
      break;
    }
    case L::UNTERMINATED_COMMENT:
      diags.error(SourceRange(parse::beginOf(t, file)), "unterminated `/*` comment");
      ok = false;
      break;
    case L::UNTERMINATED_STRING:
      diags.error(parse::rangeOf(t, file), "unterminated string");
      ok = false;
      break;
    case L::LPAREN:
    case L::LBRACE:
    case L::LBRACKET:
      if (++depth > kMaxNesting) {
        diags.error(parse::rangeOf(t, file),
                    "nesting is deeper than the limit of " + std::to_string(kMaxNesting) + " levels");
        return false;
      }
      if (t->getType() == L::LBRACE)
        operators = 0;
      break;
    case L::RPAREN:
    case L::RBRACKET: depth = std::max(0, depth - 1); break;
    case L::RBRACE:
      depth = std::max(0, depth - 1);
      operators = 0;
      break;
    case L::SEMI: operators = 0; break;
    case L::PLUS:
    case L::MINUS:
    case L::STAR:
    case L::SLASH:
    case L::PERCENT:
    case L::DOTDOT:
    case L::EQ:
    case L::NE:
    case L::LT:
    case L::LE:
    case L::GT:
    case L::GE:
    case L::AND:
    case L::OR:
    case L::NOT:
    case L::IN:
      if (++operators > kMaxOperatorsPerStmt && !tooComplexReported) {
        diags.error(parse::rangeOf(t, file),
                    "statement has more than " + std::to_string(kMaxOperatorsPerStmt) + " operators; split it up");
        tooComplexReported = true;
        ok = false;
      }
      break;
    default: break;
    }
  }
  return ok;
}

} // namespace

std::unique_ptr<ast::Module> parseModule(uint32_t file, const SourceManager &sources, DiagnosticEngine &diags) {
  const std::string &text = sources.text(file);
  size_t bad = findInvalidUtf8(text);
  if (bad != std::string::npos) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", static_cast<unsigned char>(text[bad]));
    diags.error(SourceRange(locationOfByte(text, bad, file)),
                std::string("invalid UTF-8 in source file (byte ") + buf + "); .sched files are UTF-8 text");
    return nullptr;
  }

  parse::Utf32Input input(text);
  parse::CompactLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  if (!checkTokens(tokens.getTokens(), file, diags))
    return nullptr;

  schedc_antlr::SchedParser parser(&tokens);
  parser.removeErrorListeners();
  auto strategy = std::make_shared<parse::SyntaxErrorStrategy>(file, diags);
  parser.setErrorHandler(strategy);
  parse::StatementBoundaryListener boundaries(*strategy);
  parser.addParseListener(&boundaries);
  schedc_antlr::SchedParser::FileContext *tree = parser.file();
  if (strategy->hadError())
    return nullptr;

  unsigned before = diags.errorCount();
  std::unique_ptr<ast::Module> module = parse::buildModule(tree, file, diags);
  return diags.errorCount() == before ? std::move(module) : nullptr;
}

} // namespace schedc
