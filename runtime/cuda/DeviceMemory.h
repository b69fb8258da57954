// DeviceMemory — every byte the cuda backend keeps on the GPU goes through here: buffers
// are allocated stream-ordered (cudaMallocAsync on the rank's stream) and freed when the
// last value holding them goes, and the allocator counts the bytes live and their peak, so
// the measured memory can be set beside the cost model's prediction. A failure ends the job
// (the check callback).
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>
#include <functional>
#include <memory>
#include <string>

namespace schedc::cuda {

class DeviceMemory {
public:
  // `fail` reports a CUDA error and does not return (it ends the job).
  DeviceMemory(cudaStream_t stream, std::function<void(const std::string &)> fail)
      : stream_(stream), fail_(std::move(fail)) {}
  float *allocate(int64_t count);
  void release(float *p, int64_t count);
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

// `count` floats on the device, returned to the allocator when the last holder drops it.
class DeviceBuffer {
public:
  DeviceBuffer(DeviceMemory &memory, int64_t count) : memory_(memory), data_(memory.allocate(count)), count_(count) {}
  ~DeviceBuffer() { memory_.release(data_, count_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  float *data() const { return data_; }
  int64_t count() const { return count_; }

private:
  DeviceMemory &memory_;
  float *data_;
  int64_t count_;
};
using Buffer = std::shared_ptr<DeviceBuffer>;

} // namespace schedc::cuda
