// DeviceCopies implementation: every copy and conversion is enqueued on the stream the owner's
// operation in progress uses, never waited for except by download().
#include "cuda/DeviceCopies.h"

#include "cuda/Kernels.h"

#include <algorithm>
#include <climits>
#include <string>

namespace schedc::cuda {

Buffer DeviceCopies::buffer(int64_t count, DType type) {
  return std::make_shared<DeviceBuffer>(memory_, count, type, stream_);
}

Buffer DeviceCopies::zeros(int64_t count, DType type) {
  Buffer b = buffer(count, type);
  if (count > 0)
    memory_.check(cudaMemsetAsync(b->raw(), 0, static_cast<size_t>(b->bytes()), stream_), "cudaMemsetAsync");
  return b;
}

void DeviceCopies::copy(void *to, const Buffer &from, int64_t count, int64_t offset) {
  if (count > 0)
    memory_.check(cudaMemcpyAsync(to, from->at(offset), static_cast<size_t>(count * sizeOf(from->type())),
                                  cudaMemcpyDeviceToDevice, stream_),
                  "cudaMemcpyAsync");
}

Buffer DeviceCopies::upload(const std::vector<float> &values) {
  Buffer b = buffer(static_cast<int64_t>(values.size()), DType::F32);
  if (!values.empty()) // from pageable memory: the call returns once the values are staged
    memory_.check(
        cudaMemcpyAsync(b->raw(), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync");
  return b;
}

Buffer DeviceCopies::uploadIndices(const std::vector<int64_t> &index) {
  for (int64_t i : index)
    if (i < 0 || i > INT32_MAX)
      // diag-coverage: unreachable (2^31 rows of tokens is past any device's memory at H >= 1)
      memory_.fail("a row index " + std::to_string(i) + " past the int32 the row kernels read");
  std::vector<int32_t> narrow(index.begin(), index.end());
  Buffer b = buffer(static_cast<int64_t>(narrow.size()), DType::F32); // 4-byte elements
  if (!narrow.empty())
    memory_.check(
        cudaMemcpyAsync(b->raw(), narrow.data(), narrow.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync");
  return b;
}

Buffer DeviceCopies::copyOf(const Buffer &from, int64_t offset, int64_t count) {
  if (count < 0)
    count = from->count() - offset;
  Buffer b = buffer(count, from->type());
  copy(b->raw(), from, count, offset);
  return b;
}

Buffer DeviceCopies::converted(const Buffer &from, DType type) {
  if (from->type() == type)
    return from;
  Buffer b = buffer(from->count(), type);
  convert(b->raw(), type, from->raw(), from->type(), from->count(), stream_);
  return b;
}

std::vector<float> DeviceCopies::download(const Buffer &from, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  if (count > 0) {
    Buffer f32 = converted(from, DType::F32);
    memory_.check(
        cudaMemcpyAsync(out.data(), f32->raw(), static_cast<size_t>(count) * 4, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync");
    memory_.check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  return out;
}

Buffer DeviceCopies::rangeOf(const DeviceFlat *f, int64_t begin, int64_t count, DType type) {
  if (f)
    for (const DevicePiece &p : f->pieces)
      if (p.begin == begin && p.count() == count && p.values && p.values->type() == type)
        return p.values;
  Buffer out = zeros(count, type);
  if (f)
    for (const DevicePiece &p : f->pieces) {
      int64_t lo = std::max(begin, p.begin), hi = std::min(begin + count, p.begin + p.count());
      if (lo < hi && p.values)
        copy(out->at(lo - begin), converted(p.values, type), hi - lo, lo - p.begin);
    }
  return out;
}

} // namespace schedc::cuda
