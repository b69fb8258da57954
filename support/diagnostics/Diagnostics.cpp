// DiagnosticEngine implementation: collection, error limit and clang-style rendering (a long
// source line shown as a window around the caret, a long message cut).
#include "diagnostics/Diagnostics.h"

#include <algorithm>
#include <ostream>
#include <utility>
#include <vector>

namespace schedc {

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Note: return "note";
  case Severity::Warning: return "warning";
  case Severity::Error: return "error";
  }
  return "error";
}

DiagnosticEngine::DiagnosticEngine(const SourceManager &sources, std::ostream *out) : sources_(sources), out_(out) {}

DiagnosticEngine::Builder::~Builder() {
  if (engine_)
    engine_->emit(std::move(diag_));
}

DiagnosticEngine::Builder &DiagnosticEngine::Builder::note(SourceRange range, std::string message) {
  diag_.notes.push_back(Diagnostic{Severity::Note, range, std::move(message), {}});
  return *this;
}

DiagnosticEngine::Builder DiagnosticEngine::error(SourceRange range, std::string message) {
  return Builder(this, Diagnostic{Severity::Error, range, std::move(message), {}});
}

DiagnosticEngine::Builder DiagnosticEngine::warning(SourceRange range, std::string message) {
  return Builder(this, Diagnostic{Severity::Warning, range, std::move(message), {}});
}

void DiagnosticEngine::emit(Diagnostic d) {
  if (limitReached_)
    return;
  if (d.severity == Severity::Error) {
    if (errors_ == errorLimit_) {
      limitReached_ = true;
      Diagnostic stop{Severity::Error, {}, "too many errors emitted, stopping now", {}};
      if (out_)
        *out_ << format(stop) << std::flush;
      diags_.push_back(std::move(stop));
      return;
    }
    ++errors_;
  } else if (d.severity == Severity::Warning) {
    ++warnings_;
  }
  if (out_)
    *out_ << format(d) << std::flush;
  diags_.push_back(std::move(d));
}

namespace {

// The bytes of the UTF-8 character that starts with `c` (sources are valid UTF-8).
size_t characterBytes(unsigned char c) {
  return c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
}

// Writes the caret line: spaces (tabs kept as tabs) up to the begin column, then `^` and
// `~` up to the end column when the range stays on one line.
std::string caretLine(std::string_view line, const SourceRange &r) {
  std::string out;
  uint32_t col = 1;
  size_t i = 0;
  auto advance = [&](bool keepTab) {
    size_t len = characterBytes(static_cast<unsigned char>(line[i]));
    if (keepTab)
      out += line[i] == '\t' ? '\t' : ' ';
    i += len;
    ++col;
  };
  while (col < r.begin.col && i < line.size())
    advance(true);
  out += '^';
  if (i < line.size())
    advance(false);
  if (r.end.line == r.begin.line)
    while (col <= r.end.col && i < line.size()) {
      out += '~';
      advance(false);
    }
  return out;
}

// A source line longer than this many columns is shown as a window of them around the
// caret, with `…` where it is cut (a PyTorch CSV's row can run to thousands of columns: an
// 11 KB file with 13 errors printed 56 KB of rows and carets).
constexpr uint32_t kShownColumns = 120;
constexpr uint32_t kColumnsBeforeCaret = 40;
// A message longer than this many bytes (a 2 MB identifier or `require` message quoted) is cut
// there, at a character's start, and ends with `…`.
constexpr size_t kShownMessageBytes = 1000;
const std::string_view kEllipsis = "\u2026";

// The part of `line` shown, and `r` moved into it.
std::pair<std::string, SourceRange> window(std::string_view line, SourceRange r) {
  std::vector<size_t> starts; // the byte each column starts at
  for (size_t i = 0; i < line.size(); i += characterBytes(static_cast<unsigned char>(line[i])))
    starts.push_back(i);
  auto columns = static_cast<uint32_t>(starts.size());
  if (columns <= kShownColumns)
    return {std::string(line), r};
  uint32_t caret = std::min(r.begin.col, columns + 1); // (the end of the line, at most)
  uint32_t first = caret > kColumnsBeforeCaret ? caret - kColumnsBeforeCaret : 1;
  first = std::min(first, columns - kShownColumns + 1);
  uint32_t last = first + kShownColumns - 1; // (the last column shown)
  std::string text;
  uint32_t shift = first - 1;
  if (first > 1) {
    text += kEllipsis;
    --shift; // the `…` takes a column
  }
  text += line.substr(starts[first - 1], (last < columns ? starts[last] : line.size()) - starts[first - 1]);
  if (last < columns)
    text += kEllipsis;
  SourceRange moved = r;
  moved.begin.col = caret - shift;
  if (r.end.line == r.begin.line)
    moved.end.col = std::max(std::min(r.end.col, last), caret) - shift;
  return {text, moved};
}

std::string shortened(const std::string &message) {
  if (message.size() <= kShownMessageBytes)
    return message;
  size_t cut = kShownMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80)
    --cut; // not inside a character
  return message.substr(0, cut) + std::string(kEllipsis);
}

} // namespace

std::string DiagnosticEngine::format(const Diagnostic &d) const {
  std::string s;
  auto one = [&](const Diagnostic &x) {
    SourceRange at = sources_.shown(x.range);
    if (at.valid())
      s += sources_.where(at) + ": ";
    else if (x.severity != Severity::Note)
      s += "schedc: ";
    s += severityName(x.severity);
    s += ": " + shortened(x.message) + "\n";
    if (at.valid()) {
      auto [line, shown] = window(sources_.lineText(at.begin.file, at.begin.line), at);
      s += "  " + line;
      s += "\n  " + caretLine(line, shown) + "\n";
    }
  };
  one(d);
  for (const Diagnostic &n : d.notes)
    one(n);
  return s;
}

} // namespace schedc
