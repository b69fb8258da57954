// Lexing — the parse phase's character stream and tokens, leaner than ANTLR's defaults,
// because a schedule imported from a large PyTorch CSV is a large file (millions of tokens).
// The text is decoded to UTF-32 in one pass into a buffer of its final size
// (ANTLRInputStream's converter first sizes its output at 4 code points a byte, several times
// the final buffer) and a token takes 40 bytes instead of CommonToken's 112 (the figures:
// docs/performance.md, "Figures behind design choices in the code"). Only the parse phase
// sees this header.
#pragma once

#include "SchedLexer.h"
#include "antlr4-runtime.h"

#include <string_view>

namespace schedc::parse {

// The text `utf8` as ANTLR's character stream. It must be valid UTF-8 (findInvalidUtf8);
// a leading byte-order mark is dropped, as ANTLRInputStream drops it.
class Utf32Input : public antlr4::ANTLRInputStream {
public:
  explicit Utf32Input(std::string_view utf8);
  // The code points [a, b] as UTF-8 (ANTLRInputStream's result, without its converter).
  std::string getText(const antlr4::misc::Interval &interval) override;
};

// The grammar's lexer, emitting CompactTokens (a token whose text the lexer changed, or
// with a type or channel past 16 bits, is still a CommonToken).
class CompactLexer : public schedc_antlr::SchedLexer {
public:
  using SchedLexer::SchedLexer;
  antlr4::Token *emit() override;
};

// A token as the lexer matched it: its text is read from the input when asked for. Its
// positions are 32-bit (a source file is at most 16 MiB: SourceManager's limit).
class CompactToken final : public antlr4::WritableToken {
public:
  CompactToken(antlr4::TokenSource *source, size_t type, size_t channel, size_t start, size_t stop, size_t line,
               size_t column);

  std::string getText() const override;
  size_t getType() const override { return type_; }
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() const override { return column_; }
  size_t getChannel() const override { return channel_; }
  size_t getTokenIndex() const override { return widen(index_); }
  size_t getStartIndex() const override { return start_; }
  size_t getStopIndex() const override { return widen(stop_); }
  antlr4::TokenSource *getTokenSource() const override { return source_; }
  antlr4::CharStream *getInputStream() const override;
  std::string toString() const override;

  void setType(size_t type) override { type_ = static_cast<uint16_t>(type); }
  void setLine(size_t line) override { line_ = static_cast<uint32_t>(line); }
  void setCharPositionInLine(size_t column) override { column_ = static_cast<uint32_t>(column); }
  void setChannel(size_t channel) override { channel_ = static_cast<uint16_t>(channel); }
  void setTokenIndex(size_t index) override { index_ = narrow(index); }
  // A compact token keeps no text of its own; nothing in ANTLR's runtime or schedc sets a
  // lexed token's text (the lexer's own text goes to a CommonToken instead).
  void setText(const std::string &text) override;

private:
  // size_t(-1) (ANTLR's "none", e.g. a token not yet indexed) <-> ~0u.
  static uint32_t narrow(size_t v) { return v == static_cast<size_t>(-1) ? ~0u : static_cast<uint32_t>(v); }
  static size_t widen(uint32_t v) { return v == ~0u ? static_cast<size_t>(-1) : v; }

  antlr4::TokenSource *source_;
  uint32_t start_, stop_, line_, column_;
  uint32_t index_ = ~0u;
  uint16_t type_, channel_;
};

} // namespace schedc::parse
