// DeviceData — what a value holds on the GPU, mirroring the cpu backend's host data
// (backend/Tensors.h): weights, optimizer states and weight gradients as pieces of the flat
// H x H array (a shard costs its elements), activations as T rows of width H per
// micro-batch; and how a value's buffers are taken apart for a message (describe) and made
// again where it arrives (rebuild). Internal to runtime/cuda/.
#pragma once

#include "backend/Payload.h"
#include "cuda/DeviceMemory.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace schedc::cuda {

// The sum of `f` over `items`.
template <class Items, class F> int64_t sumOver(const Items &items, F f) {
  int64_t n = 0;
  for (const auto &item : items)
    n += f(item);
  return n;
}

struct DevicePiece {
  int64_t begin = 0;
  // The elements: fp32 (optimizer moments and masters; everything in an fp32 run) or bf16
  // (a bf16 run's weights, and its weight gradients unless they are kept in fp32).
  Buffer values;
  int64_t count() const { return values ? values->count() : 0; }
  int64_t bytes() const { return values ? values->bytes() : 0; }
};
struct DeviceFlat {
  std::vector<DevicePiece> pieces;
  int64_t elements() const {
    return sumOver(pieces, [](const DevicePiece &p) { return p.count(); });
  }
  int64_t bytes() const {
    return sumOver(pieces, [](const DevicePiece &p) { return p.bytes(); });
  }
};
// Whether `f`'s pieces hold every element of [begin, begin + count) (they are disjoint).
inline bool covers(const DeviceFlat &f, int64_t begin, int64_t count) {
  int64_t held = sumOver(f.pieces, [&](const DevicePiece &p) {
    return std::max<int64_t>(0, std::min(begin + count, p.begin + p.count()) - std::max(begin, p.begin));
  });
  return held == count;
}

// The optimizer state: its moments and, at bf16, the fp32 master weights of its slice.
struct DeviceOpt {
  std::vector<DeviceFlat> moments;
  DeviceFlat master; // empty at fp32
  int64_t bytes() const {
    return master.bytes() + sumOver(moments, [](const DeviceFlat &m) { return m.bytes(); });
  }
};
struct DeviceRows {
  int64_t rows = 0;
  Buffer values;
  int64_t bytes() const { return values ? values->bytes() : 0; }
};

using DevicePayloads = backend::Payloads<DeviceFlat, DeviceOpt, DeviceRows>;

// `meta` carrying `data`; its bytes are its buffers'.
template <class T> sim::ValuePtr withData(const sim::ValuePtr &meta, T data) {
  int64_t bytes = data.bytes();
  return DevicePayloads::with(meta, std::move(data), bytes);
}

// The stream bookkeeping of every device buffer of `values`' data.
std::vector<BufferUses *> usesOf(std::initializer_list<sim::ValuePtr> values);

// Appends every device buffer of `v`'s data (what a message carries), and the words that
// say how they make that data again (what `rebuild` reads): the shape
// (0 none, 1 rows, 2 flat, 3 optimizer state), then for rows the row count and whether
// it has its buffer, for a flat array its pieces (begin, has values), for an optimizer
// state the number of moments, their flat arrays and the master's.
void describe(const sim::ValuePtr &v, std::vector<int64_t> &words, std::vector<Buffer> &buffers);

// `meta` carrying the data `describe` took apart.
sim::ValuePtr rebuild(const sim::ValuePtr &meta, const std::vector<int64_t> &words, const std::vector<Buffer> &buffers);

} // namespace schedc::cuda
