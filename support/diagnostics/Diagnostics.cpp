// DiagnosticEngine implementation: collection, error limit and clang-style rendering.
#include "diagnostics/Diagnostics.h"

#include <ostream>

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

// Writes the caret line: spaces (tabs kept as tabs) up to the begin column, then `^` and
// `~` up to the end column when the range stays on one line.
std::string caretLine(std::string_view line, const SourceRange &r) {
  std::string out;
  uint32_t col = 1;
  size_t i = 0;
  auto advance = [&](bool keepTab) {
    auto c = static_cast<unsigned char>(line[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
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
    s += ": " + x.message + "\n";
    if (at.valid()) {
      std::string_view line = sources_.lineText(at.begin.file, at.begin.line);
      s += "  ";
      s += line;
      s += "\n  " + caretLine(line, at) + "\n";
    }
  };
  one(d);
  for (const Diagnostic &n : d.notes)
    one(n);
  return s;
}

} // namespace schedc
