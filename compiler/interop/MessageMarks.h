// MessageMarks — what a row of a PyTorch file did with each of its messages, by (gradient or
// not, stage, micro-batch): posted its receive, made it, sent it, each with the cell where.
// A dense table, cleared at each row's end by the entries it touched: the import looks up
// every cell's messages here, which trees of tuples made slow (docs/performance.md).
#pragma once

#include "diagnostics/InternalError.h"
#include "diagnostics/SourceManager.h"

#include <cstdint>
#include <vector>

namespace schedc::interop {

class MessageMarks {
public:
  MessageMarks(int64_t stages, int64_t microBatches)
      : stages_(stages), microBatches_(microBatches), at_(static_cast<size_t>(2 * stages * microBatches)),
        marked_(at_.size(), 0) {}

  // Where (gradient, s, mb) was marked, or null.
  const SourceRange *find(bool gradient, int64_t s, int64_t mb) const {
    size_t i = index(gradient, s, mb);
    return marked_[i] ? &at_[i] : nullptr;
  }
  // Marks it at `at`; false (and the first mark kept) if it was marked already.
  bool mark(bool gradient, int64_t s, int64_t mb, SourceRange at) {
    size_t i = index(gradient, s, mb);
    if (marked_[i])
      return false;
    marked_[i] = 1, at_[i] = at, ++count_;
    touched_.push_back(i);
    return true;
  }
  // Unmarks it; false if it was not marked.
  bool erase(bool gradient, int64_t s, int64_t mb) {
    size_t i = index(gradient, s, mb);
    if (!marked_[i])
      return false;
    marked_[i] = 0, --count_;
    return true;
  }
  // Each marked entry in (gradient, stage, micro-batch) order.
  template <class F> void forEach(F f) const {
    if (count_ == 0)
      return;
    for (size_t i = 0; i < marked_.size(); ++i)
      if (marked_[i]) {
        auto m = static_cast<int64_t>(i);
        f(m >= stages_ * microBatches_, m / microBatches_ % stages_, m % microBatches_, at_[i]);
      }
  }
  void clear() {
    for (size_t i : touched_)
      marked_[i] = 0;
    touched_.clear(), count_ = 0;
  }

private:
  size_t index(bool gradient, int64_t s, int64_t mb) const {
    SCHEDC_ASSERT(s >= 0 && s < stages_ && mb >= 0 && mb < microBatches_, "a message of no stage or micro-batch");
    return static_cast<size_t>(((gradient ? stages_ : 0) + s) * microBatches_ + mb);
  }

  int64_t stages_, microBatches_;
  std::vector<SourceRange> at_;
  std::vector<uint8_t> marked_;
  std::vector<size_t> touched_;
  size_t count_ = 0;
};

} // namespace schedc::interop
