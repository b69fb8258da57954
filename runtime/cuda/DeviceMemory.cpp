// DeviceMemory implementation.
#include "cuda/DeviceMemory.h"

#include <algorithm>

namespace schedc::cuda {

void *DeviceMemory::allocate(int64_t bytes) {
  if (bytes <= 0)
    return nullptr;
  void *p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, static_cast<size_t>(bytes), stream_);
  if (e != cudaSuccess)
    fail("cudaMallocAsync of " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(e));
  live_ += bytes;
  peak_ = std::max(peak_, live_);
  return p;
}

void DeviceMemory::release(void *p, int64_t bytes) {
  if (!p)
    return;
  cudaFreeAsync(p, stream_); // stream-ordered: after every use enqueued so far
  live_ -= bytes;
}

} // namespace schedc::cuda
