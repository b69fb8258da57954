// DeviceCopies — the cuda backend's buffers made, zeroed, copied, converted between fp32 and
// bf16 and read back to the host, each on the stream the operation in progress uses (a
// reference to its owner's: CudaRank's current_), every byte through DeviceMemory.
#pragma once

#include "cuda/DeviceData.h"
#include "cuda/DeviceMemory.h"

#include <cstdint>
#include <vector>

namespace schedc::cuda {

class DeviceCopies {
public:
  DeviceCopies(DeviceMemory &memory, const cudaStream_t &stream) : memory_(memory), stream_(stream) {}

  // A new buffer of `count` elements of `type` (uninitialised), or zeroed.
  Buffer buffer(int64_t count, DType type);
  Buffer zeros(int64_t count, DType type);
  // `count` elements from `from` (at element `offset`) to `to` (same type).
  void copy(void *to, const Buffer &from, int64_t count, int64_t offset = 0);
  // Elements [offset, offset + count) of `from` (count -1: to its end) in a new buffer.
  Buffer copyOf(const Buffer &from, int64_t offset = 0, int64_t count = -1);
  // `from` as `type` (itself when it already is).
  Buffer converted(const Buffer &from, DType type);
  // Host values on the device: fp32 elements; int32 indices (kept in a buffer of 4-byte
  // elements, read as int32 by the kernels that take an index).
  Buffer upload(const std::vector<float> &values);
  Buffer uploadIndices(const std::vector<int64_t> &index);
  // The first `count` elements of `from` on the host, as fp32 (waits for the stream).
  std::vector<float> download(const Buffer &from, int64_t count);
  // Elements [begin, begin + count) of `f` as `type`: the piece's own buffer when one piece
  // is exactly that range, else assembled over zeros.
  Buffer rangeOf(const DeviceFlat *f, int64_t begin, int64_t count, DType type);

private:
  DeviceMemory &memory_;
  const cudaStream_t &stream_;
};

} // namespace schedc::cuda
