// SourceManager implementation: file loading with a size limit and line-start indexing.
#include "diagnostics/SourceManager.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace schedc {

SourceRange SourceRange::cover(const SourceRange &a, const SourceRange &b) {
  if (!a.valid())
    return b;
  if (!b.valid() || a.begin.file != b.begin.file)
    return a;
  auto before = [](const SourceLoc &x, const SourceLoc &y) {
    return x.line < y.line || (x.line == y.line && x.col < y.col);
  };
  return {before(a.begin, b.begin) ? a.begin : b.begin, before(a.end, b.end) ? b.end : a.end};
}

namespace {

// Reads `fd` to its end into `text`; false (with `error`) on a read error or past the size limit.
bool readAll(int fd, std::string &text, std::string &error) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = std::strerror(errno);
      return false;
    }
    if (n == 0)
      return true;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > SourceManager::kMaxFileBytes) {
      error = "file is larger than the limit of " + std::to_string(SourceManager::kMaxFileBytes >> 20) + " MiB";
      return false;
    }
  }
}

} // namespace

// File id 0 is reserved for "no file" so that a default SourceLoc never names a real file.
SourceManager::SourceManager() {
  files_.push_back(File{"<none>", "", {0}, {}});
}

std::optional<uint32_t> SourceManager::load(const std::string &path, std::string &error) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "is a directory";
    return std::nullopt;
  }
  // Opened without waiting: opening a FIFO that no process writes would block for ever. Reads
  // then wait as usual (a pipe with a writer, `<(...)`, is read to its end).
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  bool read = readAll(fd, text, error);
  close(fd);
  if (!read)
    return std::nullopt;
  if (text.empty() && S_ISFIFO(st.st_mode)) {
    error = "is a FIFO that no process writes to";
    return std::nullopt;
  }
  return addBuffer(path, std::move(text));
}

uint32_t SourceManager::addBuffer(std::string name, std::string text) {
  File f{std::move(name), std::move(text), {0}, {}};
  for (size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n')
      f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

uint32_t SourceManager::addDerived(std::string name, std::string text, std::vector<SourceRange> origins) {
  uint32_t id = addBuffer(std::move(name), std::move(text));
  files_[id].origins = std::move(origins);
  return id;
}

SourceRange SourceManager::shown(const SourceRange &r) const {
  if (!r.valid() || r.begin.file >= files_.size())
    return r;
  const std::vector<SourceRange> &origins = files_[r.begin.file].origins;
  return r.begin.line <= origins.size() && origins[r.begin.line - 1].valid() ? origins[r.begin.line - 1] : r;
}

std::string SourceManager::where(const SourceRange &r) const {
  if (!r.valid())
    return "";
  SourceLoc b = shown(r).begin;
  return name(b.file) + ":" + std::to_string(b.line) + ":" + std::to_string(b.col);
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  if (file >= files_.size())
    return {};
  const File &f = files_[file];
  if (line == 0 || line > f.lineStarts.size())
    return {};
  size_t start = f.lineStarts[line - 1];
  size_t end = line < f.lineStarts.size() ? f.lineStarts[line] - 1 : f.text.size();
  std::string_view s(f.text.data() + start, end - start);
  if (!s.empty() && s.back() == '\r')
    s.remove_suffix(1);
  return s;
}

size_t findInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size())
      return i;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2)
        return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong encodings, surrogates and values past U+10FFFF.
    static const uint32_t minForLen[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minForLen[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return i;
    i += len;
  }
  return std::string_view::npos;
}

} // namespace schedc
