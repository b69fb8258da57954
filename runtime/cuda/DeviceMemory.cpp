// DeviceMemory implementation.
#include "cuda/DeviceMemory.h"

#include <algorithm>

namespace schedc::cuda {

float *DeviceMemory::allocate(int64_t count) {
  if (count <= 0)
    return nullptr;
  void *p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, static_cast<size_t>(count) * sizeof(float), stream_);
  if (e != cudaSuccess)
    fail("cudaMallocAsync of " + std::to_string(count * 4) + " bytes: " + cudaGetErrorString(e));
  live_ += count * 4;
  peak_ = std::max(peak_, live_);
  return static_cast<float *>(p);
}

void DeviceMemory::release(float *p, int64_t count) {
  if (!p)
    return;
  cudaFreeAsync(p, stream_); // stream-ordered: after every use enqueued so far
  live_ -= count * 4;
}

} // namespace schedc::cuda
