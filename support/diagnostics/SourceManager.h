// SourceManager — owns the text of every source file the compiler reads and maps source
// locations back to lines for diagnostics. A SourceLoc is (file id, 1-based line, 1-based
// column counted in Unicode code points, so a caret lines up under the character a user sees).
// Files are read once and never change; ids are stable for the life of the compilation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedc {

struct SourceLoc {
  uint32_t file = 0;
  uint32_t line = 0; // 0 means "no location"
  uint32_t col = 0;

  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc &a, const SourceLoc &b) {
    return a.file == b.file && a.line == b.line && a.col == b.col;
  }
};

// A range of source text; `end` is the location of the last character (inclusive).
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;

  SourceRange() = default;
  SourceRange(SourceLoc b) : begin(b), end(b) {}
  SourceRange(SourceLoc b, SourceLoc e) : begin(b), end(e) {}
  bool valid() const { return begin.valid(); }
  // The smallest range covering both.
  static SourceRange cover(const SourceRange &a, const SourceRange &b);
};

class SourceManager {
public:
  // Largest file the compiler accepts; anything bigger is refused with a clear error.
  static constexpr size_t kMaxFileBytes = 16u << 20;

  SourceManager();

  // Reads `path`. On failure returns nullopt and sets `error` to a readable reason.
  std::optional<uint32_t> load(const std::string &path, std::string &error);
  // Registers text that did not come from a file (tests, -D values).
  uint32_t addBuffer(std::string name, std::string text);
  // Registers text made from another file (`schedc import`: a schedule written from a
  // PyTorch CSV): whatever is on its line i is shown at origins[i - 1], the part of the file
  // the user wrote that the line came from (lines past the end are shown as they are).
  uint32_t addDerived(std::string name, std::string text, std::vector<SourceRange> origins);

  // Where `r` is shown to the user: itself, or for derived text the range its line came from.
  SourceRange shown(const SourceRange &r) const;
  // "file:line:col" of where `r` is shown ("" for no location).
  std::string where(const SourceRange &r) const;

  const std::string &name(uint32_t file) const { return files_[file].name; }
  const std::string &text(uint32_t file) const { return files_[file].text; }
  // The text of a 1-based line, without its line terminator.
  std::string_view lineText(uint32_t file, uint32_t line) const;
  size_t fileCount() const { return files_.size(); }

private:
  struct File {
    std::string name;
    std::string text;
    std::vector<size_t> lineStarts;
    std::vector<SourceRange> origins; // derived text: where each line came from
  };
  std::vector<File> files_;
};

// Returns the byte offset of the first invalid UTF-8 sequence in `text`, or npos.
size_t findInvalidUtf8(std::string_view text);

} // namespace schedc
