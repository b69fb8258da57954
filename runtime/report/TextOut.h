// TextOut — text appended piece by piece (`out += ...`) and written to a stream some 64 KiB
// at a time, so an output file of any size (the trace or the timeline of 1024 ranks: tens
// of MB) is never whole in memory, and is written as it is made. Not `stream << piece` for
// each piece: a sentry and a call into the stream per piece is slower (docs/performance.md,
// "Figures behind design choices in the code").
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace schedc::sim {

class TextOut {
public:
  explicit TextOut(std::ostream &out) : out_(out) {}
  TextOut(const TextOut &) = delete;
  TextOut &operator=(const TextOut &) = delete;
  ~TextOut() { flush(); }

  TextOut &operator+=(std::string_view text) {
    pending_ += text;
    if (pending_.size() >= kPiece)
      flush();
    return *this;
  }
  void flush() {
    out_ << pending_;
    pending_.clear();
  }

private:
  static constexpr size_t kPiece = 65536;
  std::ostream &out_;
  std::string pending_;
};

} // namespace schedc::sim
