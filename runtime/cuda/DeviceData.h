// DeviceData — what a value holds on the GPU, mirroring the cpu backend's host data
// (backend/Tensors.h): weights, optimizer states and weight gradients as pieces of the flat
// H x H array (a shard costs its elements), activations as T rows of width H per
// micro-batch; and how a value's buffers are taken apart for a message (describe) and made
// again where it arrives (rebuild). Internal to runtime/cuda/.
#pragma once

#include "backend/Payload.h"
#include "cuda/DeviceMemory.h"

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
  Buffer values; // fp32 masters (weights, optimizer moments), or a gradient (fp32 or bf16)
  Buffer copy;   // a weight at bf16: the bf16 copy of `values` the GEMMs read
  int64_t count() const { return values ? values->count() : 0; }
  int64_t bytes() const { return (values ? values->bytes() : 0) + (copy ? copy->bytes() : 0); }
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
struct DeviceOpt {
  std::vector<DeviceFlat> moments;
  int64_t bytes() const {
    return sumOver(moments, [](const DeviceFlat &m) { return m.bytes(); });
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
// it has its buffer, for a flat array its pieces (begin, has values, has a copy), for an
// optimizer state its moments' flat arrays.
void describe(const sim::ValuePtr &v, std::vector<int64_t> &words, std::vector<Buffer> &buffers);

// `meta` carrying the data `describe` took apart.
sim::ValuePtr rebuild(const sim::ValuePtr &meta, const std::vector<int64_t> &words, const std::vector<Buffer> &buffers);

} // namespace schedc::cuda
