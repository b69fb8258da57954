// DeviceMemory implementation.
#include "cuda/DeviceMemory.h"

#include <algorithm>

namespace schedc::cuda {

void *DeviceMemory::allocate(int64_t bytes, cudaStream_t stream) {
  if (bytes <= 0)
    return nullptr;
  void *p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, static_cast<size_t>(bytes), stream);
  if (e != cudaSuccess)
    fail("cudaMallocAsync of " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(e));
  live_ += bytes;
  peak_ = std::max(peak_, live_);
  return p;
}

void DeviceMemory::release(void *p, int64_t bytes, BufferUses &uses) {
  if (!p)
    return;
  cudaFreeAsync(p, order_.release(uses)); // stream-ordered: after every use enqueued so far
  live_ -= bytes;
}

CudaStreams::Event CudaStreams::record(Stream s) const {
  cudaEvent_t e = nullptr;
  cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (r == cudaSuccess)
    r = cudaEventRecord(e, s);
  check(r, "cudaEventRecord");
  return Event(e, [](cudaEvent_t done) { cudaEventDestroy(done); });
}

void CudaStreams::wait(Stream s, const Event &e) const {
  if (!e)
    // diag-coverage: unreachable (StreamOrder marks every buffer used off the compute stream; its unit test checks)
    fail("internal error: a buffer used off the compute stream has no event to wait for");
  check(cudaStreamWaitEvent(s, e.get(), 0), "cudaStreamWaitEvent");
}

} // namespace schedc::cuda
