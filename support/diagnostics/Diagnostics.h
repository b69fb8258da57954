// Diagnostics — the one engine through which every user-facing error, warning and note
// leaves the compiler. Passes never print: they report here. A diagnostic is
// `file:line:col: error: message`, then the source line and a caret under the range, then
// any notes (related locations) in the same shape. The engine keeps every diagnostic (for
// `--format=json`), counts errors, and stops accepting errors past a limit so that garbage
// input cannot flood the terminal. Messages are lower case, without a trailing period, and
// put source names in backticks.
#pragma once

#include "diagnostics/SourceManager.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace schedc {

enum class Severity { Note, Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::vector<Diagnostic> notes;
};

// A note for a diagnostic (Diagnostic::notes).
inline Diagnostic note(SourceRange at, std::string message) {
  return Diagnostic{Severity::Note, at, std::move(message), {}};
}

class DiagnosticEngine {
public:
  // Diagnostics are printed to `out` as they are finished (pass nullptr to only collect).
  DiagnosticEngine(const SourceManager &sources, std::ostream *out);
  DiagnosticEngine(const DiagnosticEngine &) = delete;
  DiagnosticEngine &operator=(const DiagnosticEngine &) = delete;

  // Collects a diagnostic and its notes; emitted when the builder goes out of scope.
  class Builder {
  public:
    Builder(DiagnosticEngine *engine, Diagnostic d) : engine_(engine), diag_(std::move(d)) {}
    Builder(Builder &&other) noexcept : engine_(other.engine_), diag_(std::move(other.diag_)) {
      other.engine_ = nullptr;
    }
    Builder(const Builder &) = delete;
    ~Builder();
    Builder &note(SourceRange range, std::string message);

  private:
    DiagnosticEngine *engine_;
    Diagnostic diag_;
  };

  Builder error(SourceRange range, std::string message);
  Builder warning(SourceRange range, std::string message);

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }
  bool hasErrors() const { return errors_ != 0; }
  // True once the error limit was reached: later errors are dropped; phases may stop early.
  bool limitReached() const { return limitReached_; }
  void setErrorLimit(unsigned limit) { errorLimit_ = limit; }

  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  // Formats one diagnostic (with notes) exactly as it is printed.
  std::string format(const Diagnostic &d) const;

private:
  void emit(Diagnostic d);

  const SourceManager &sources_;
  std::ostream *out_;
  std::vector<Diagnostic> diags_;
  unsigned errors_ = 0;
  unsigned warnings_ = 0;
  unsigned errorLimit_ = 20;
  bool limitReached_ = false;
};

// The process exit codes of every schedc command; documented in docs/diagnostics.md.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1, // the schedule was read but is not a correct training step
  kExitUsage = 2,       // bad command line (unknown option, malformed -D, ...)
  kExitSourceError = 3, // syntax or semantic errors in the source
  kExitIoError = 4,     // a file could not be read or written
  kExitNoDevice = 5,    // the backend asked for cannot run here (cuda with no usable GPU)
  kExitLimit = 6,       // a resource limit stopped the run (steps, time, memory): not judged
  kExitInternal = 70,   // a bug in schedc (an internal assertion)
};

const char *severityName(Severity s);

} // namespace schedc
