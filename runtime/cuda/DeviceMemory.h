// DeviceMemory — every byte the cuda backend keeps on the GPU goes through here: buffers
// are allocated stream-ordered (cudaMallocAsync on the rank's stream) and freed when the
// last value holding them goes, and the allocator counts the bytes live and their peak, so
// the measured memory can be set beside the cost model's prediction. A buffer holds fp32
// or bf16 elements (bf16 mixed precision keeps weight copies, gradients and activations in
// bf16). A failure ends the job (the fail callback).
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <functional>
#include <memory>
#include <string>

namespace schedc::cuda {

enum class DType : uint8_t { F32, BF16 };
inline int64_t sizeOf(DType t) {
  return t == DType::BF16 ? 2 : 4;
}

class DeviceMemory {
public:
  // `fail` reports a CUDA error and does not return (it ends the job).
  DeviceMemory(cudaStream_t stream, std::function<void(const std::string &)> fail)
      : stream_(stream), fail_(std::move(fail)) {}
  void *allocate(int64_t bytes);
  void release(void *p, int64_t bytes);
  int64_t liveBytes() const { return live_; }
  int64_t peakBytes() const { return peak_; }
  cudaStream_t stream() const { return stream_; }
  [[noreturn]] void fail(const std::string &what) const {
    fail_(what);
    std::abort();
  }

private:
  cudaStream_t stream_;
  std::function<void(const std::string &)> fail_;
  int64_t live_ = 0, peak_ = 0;
};

// `count` elements of `type` on the device, returned to the allocator when the last holder
// drops it.
class DeviceBuffer {
public:
  DeviceBuffer(DeviceMemory &memory, int64_t count, DType type)
      : memory_(memory), data_(memory.allocate(count * sizeOf(type))), count_(count), type_(type) {}
  ~DeviceBuffer() { memory_.release(data_, bytes()); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *raw() const { return data_; }
  // The address of element `i` (an offset into the buffer by its element size).
  void *at(int64_t i) const { return static_cast<char *>(data_) + i * sizeOf(type_); }
  float *f32() const { return static_cast<float *>(data_); } // a F32 buffer's elements
  int64_t count() const { return count_; }
  int64_t bytes() const { return count_ * sizeOf(type_); }
  DType type() const { return type_; }

private:
  DeviceMemory &memory_;
  void *data_;
  int64_t count_;
  DType type_;
};
using Buffer = std::shared_ptr<DeviceBuffer>;

} // namespace schedc::cuda
