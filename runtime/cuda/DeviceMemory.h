// DeviceMemory — every byte the cuda backend keeps on the GPU goes through here: buffers
// are allocated stream-ordered (cudaMallocAsync on the stream of the work that makes them)
// and freed when the last value holding them goes — on the stream that used them last (see
// StreamOrder.h), so a free never overtakes a use on another stream — and the allocator
// counts the bytes live and their peak, so the measured memory can be set beside the cost
// model's prediction. A buffer holds fp32 or bf16 elements (bf16 mixed precision keeps
// weight copies, gradients and activations in bf16). A failure ends the job (the fail
// callback).
#pragma once

#include "cost/StreamOrder.h"

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace schedc::cuda {

enum class DType : uint8_t { F32, BF16 };
inline int64_t sizeOf(DType t) {
  return t == DType::BF16 ? 2 : 4;
}

// StreamOrder's device: CUDA streams, and events shared by every buffer one piece of work
// touched (destroyed with their last holder; CUDA releases a pending one once it completes).
struct CudaStreams {
  using Stream = cudaStream_t;
  using Event = std::shared_ptr<CUevent_st>; // cudaEvent_t is CUevent_st *
  std::function<void(const std::string &)> fail;
  // Fails with `what` and CUDA's words for `e` unless it is success.
  void check(cudaError_t e, const char *what) const {
    if (e != cudaSuccess)
      fail(std::string(what) + ": " + cudaGetErrorString(e));
  }
  Event record(Stream s) const;
  void wait(Stream s, const Event &e) const;
};
using Order = cost::StreamOrder<CudaStreams>;
using BufferUses = cost::StreamUses<CudaStreams>;

class DeviceMemory {
public:
  // `fail` reports a CUDA error and does not return (it ends the job). The compute and
  // collectives streams are the rank's (see StreamOrder).
  DeviceMemory(std::function<void(const std::string &)> fail, cudaStream_t compute, cudaStream_t collectives)
      : streams_{std::move(fail)}, order_(streams_, compute, collectives) {}
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  // `bytes` for work about to run on `stream`.
  void *allocate(int64_t bytes, cudaStream_t stream);
  // Frees `p` where StreamOrder says, once every stream that used it is done with it.
  void release(void *p, int64_t bytes, BufferUses &uses);
  int64_t liveBytes() const { return live_; }
  int64_t peakBytes() const { return peak_; }
  void forgetPeak() { peak_ = live_; } // the peak from now on (after a warm-up)
  Order &order() { return order_; }
  const CudaStreams &streams() const { return streams_; }
  void check(cudaError_t e, const char *what) const { streams_.check(e, what); }
  [[noreturn]] void fail(const std::string &what) const {
    streams_.fail(what);
    std::abort();
  }

private:
  CudaStreams streams_;
  Order order_;
  int64_t live_ = 0, peak_ = 0;
};

// `count` elements of `type` on the device, made by work on `stream`; returned to the
// allocator when the last holder drops it.
class DeviceBuffer {
public:
  DeviceBuffer(DeviceMemory &memory, int64_t count, DType type, cudaStream_t stream)
      : memory_(memory), data_(memory.allocate(count * sizeOf(type), stream)), count_(count), type_(type) {
    Order::made(uses_, stream);
  }
  ~DeviceBuffer() { memory_.release(data_, bytes(), uses_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *raw() const { return data_; }
  // The address of element `i` (an offset into the buffer by its element size).
  void *at(int64_t i) const { return static_cast<char *>(data_) + i * sizeOf(type_); }
  float *f32() const { return static_cast<float *>(data_); } // a F32 buffer's elements
  int64_t count() const { return count_; }
  int64_t bytes() const { return count_ * sizeOf(type_); }
  DType type() const { return type_; }
  // Which streams made and used it (kept by StreamOrder; the elements never change once made).
  BufferUses &uses() const { return uses_; }

private:
  DeviceMemory &memory_;
  void *data_;
  int64_t count_;
  DType type_;
  mutable BufferUses uses_;
};
using Buffer = std::shared_ptr<DeviceBuffer>;

// The stream bookkeeping of `buffers` (null ones left out), for StreamOrder.
inline std::vector<BufferUses *> usesOf(const std::vector<Buffer> &buffers) {
  std::vector<BufferUses *> uses;
  for (const Buffer &b : buffers)
    if (b)
      uses.push_back(&b->uses());
  return uses;
}

} // namespace schedc::cuda
