// Lexing implementation: one-pass UTF-8 decoding into the stream's buffer, UTF-8 encoding
// of a token's text, and the compact tokens the lexer emits.
#include "parse/Lexing.h"

#include <stdexcept>

namespace schedc::parse {

namespace {

// The code points of well-formed UTF-8 (at most one per byte).
void decodeUtf8(std::string_view s, std::u32string &out) {
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
}

void encodeUtf8(char32_t cp, std::string &out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
    return;
  }
  int len = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  static const unsigned char lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  out.push_back(static_cast<char>(lead[len] | (cp >> (6 * (len - 1)))));
  for (int k = len - 2; k >= 0; --k)
    out.push_back(static_cast<char>(0x80 | ((cp >> (6 * k)) & 0x3F)));
}

} // namespace

Utf32Input::Utf32Input(std::string_view utf8) {
  if (utf8.substr(0, 3) == "\xEF\xBB\xBF")
    utf8.remove_prefix(3);
  decodeUtf8(utf8, _data);
  p = 0;
}

std::string Utf32Input::getText(const antlr4::misc::Interval &interval) {
  if (interval.a < 0 || interval.b < 0 || _data.empty())
    return "";
  auto start = static_cast<size_t>(interval.a);
  size_t stop = std::min(static_cast<size_t>(interval.b), _data.size() - 1);
  std::string text;
  for (size_t i = start; i <= stop; ++i)
    encodeUtf8(_data[i], text);
  return text;
}

antlr4::Token *CompactLexer::emit() {
  if (!_text.empty() || type > 0xFFFF || channel > 0xFFFF)
    return Lexer::emit();
  auto t = std::make_unique<CompactToken>(this, type, channel, tokenStartCharIndex, getCharIndex() - 1, tokenStartLine,
                                          tokenStartCharPositionInLine);
  antlr4::Token *emitted = t.get();
  Lexer::emit(std::move(t));
  return emitted;
}

CompactToken::CompactToken(antlr4::TokenSource *source, size_t type, size_t channel, size_t start, size_t stop,
                           size_t line, size_t column)
    : source_(source), start_(static_cast<uint32_t>(start)), stop_(narrow(stop)), line_(static_cast<uint32_t>(line)),
      column_(static_cast<uint32_t>(column)), type_(static_cast<uint16_t>(type)),
      channel_(static_cast<uint16_t>(channel)) {}

antlr4::CharStream *CompactToken::getInputStream() const {
  return source_ ? source_->getInputStream() : nullptr;
}

// As CommonToken reads its text: from the input, "<EOF>" past its end.
std::string CompactToken::getText() const {
  antlr4::CharStream *input = getInputStream();
  if (!input)
    return "";
  size_t n = input->size(), stop = getStopIndex();
  if (start_ < n && stop < n)
    return input->getText(antlr4::misc::Interval(static_cast<size_t>(start_), stop));
  return "<EOF>";
}

// CommonToken's debugging form: [@index,start:stop='text',<type>,line:column].
std::string CompactToken::toString() const {
  std::string text;
  for (char c : getText())
    text += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : std::string(1, c);
  auto numeric = [](size_t v) { return std::to_string(static_cast<ssize_t>(v)); };
  return "[@" + numeric(getTokenIndex()) + "," + numeric(start_) + ":" + numeric(getStopIndex()) + "='" +
         (text.empty() ? "<no text>" : text) + "',<" + std::to_string(type_) + ">" +
         (channel_ > 0 ? ",channel=" + std::to_string(channel_) : "") + "," + std::to_string(line_) + ":" +
         std::to_string(column_) + "]";
}

void CompactToken::setText(const std::string &) {
  throw std::logic_error("schedc: a lexed token's text cannot be replaced (CompactToken)");
}

} // namespace schedc::parse
