// NumberLog — Numbers appended in order and read back by index, each in 8 bytes and a bit (a
// Number is 16: its 8-byte integer or double and whether it is a double, padded). A rank
// keeps every event's end for the events that wait for it (cost::RankClock): a run of 63 M
// events (a 405B-class step on 16 384 ranks) keeps 0.5 GB less.
#pragma once

#include "memory/ChunkedLog.h"
#include "numbers/Number.h"

#include <cstddef>
#include <cstdint>

namespace schedc {

class NumberLog {
public:
  void push_back(const Number &n) {
    size_t i = payloads_.size();
    payloads_.emplace_back() = n.payload();
    if (i % 64 == 0)
      reals_.emplace_back();
    if (!n.isInteger())
      reals_.back() |= uint64_t{1} << (i % 64);
  }
  Number operator[](size_t i) const { return Number::fromPayload(payloads_[i], (reals_[i / 64] >> (i % 64)) & 1); }
  Number back() const { return (*this)[size() - 1]; }
  size_t size() const { return payloads_.size(); }

private:
  // In chunks of 128 payloads (1 KiB) and of 16 words of bits (1024 numbers): a rank of
  // stdlib hybrid on 16 384 ranks logs some 130 events.
  memory::ChunkedLog<uint64_t, 7> payloads_;
  memory::ChunkedLog<uint64_t, 4> reals_; // bit i % 64 of word i / 64: number i is a double
};

} // namespace schedc
