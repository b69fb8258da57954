// Calibrate (cuda) — `--calibrate=FILE --backend=cuda`: this process's GPU measured into a
// hardware file (cost/Hardware.h), for a preset's table or a cluster's own file:
//   gemm_tflops_bf16, gemm_tflops_tf32   cuBLAS (cublasGemmEx bf16 with fp32 accumulation;
//                                        cublasSgemm on TF32 tensor cores) over the grid m, n,
//                                        k in 256 .. 8192 (powers of two), each the median of
//                                        five timed by CUDA events after one to load its kernel
//   memory_bandwidth_gbs                 a device-to-device copy of 1 GiB (read and written)
//   memory_gb, overhead_gb               the device's memory, and what the CUDA context and the
//                                        driver hold before schedc allocates (cudaMemGetInfo;
//                                        NCCL's buffers are not in it: one process, no NCCL)
// Links, peaks and the node's size come from the dgx-h100 preset the file names (one GPU
// cannot measure NVLink or the network); the file says so. Defined here and found by
// runtime/rt (a weak reference: programs built without --cuda have no such entry).
#include "cuda/Gemms.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>

namespace schedc::cuda {

std::string calibrateDevice() {
  auto check = [](cudaError_t e, const char *what) {
    if (e != cudaSuccess)
      throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  };
  check(cudaFree(nullptr), "cudaFree (creating the context)");
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");

  cudaStream_t compute = nullptr, collectives = nullptr;
  check(cudaStreamCreate(&compute), "cudaStreamCreate");
  check(cudaStreamCreate(&collectives), "cudaStreamCreate");
  std::string table[2];
  double bandwidth = 0;
  {
    DeviceMemory memory([](const std::string &problem) -> void { throw std::runtime_error(problem); }, compute,
                        collectives);
    Gemms bf16(memory, compute, false), tf32(memory, compute, true);
    const int64_t sizes[] = {256, 512, 1024, 2048, 4096, 8192};
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t k : sizes) {
          auto row = [&](double rate) {
            char text[96];
            std::snprintf(text, sizeof text, "  [%lld, %lld, %lld, %.1f],\n", static_cast<long long>(m),
                          static_cast<long long>(n), static_cast<long long>(k), rate / 1e12);
            return std::string(text);
          };
          table[0] += row(bf16.rate(m, n, k, DType::BF16));
          table[1] += row(tf32.rate(m, n, k, DType::F32));
        }
    // A 1 GiB device-to-device copy: its bytes read and written over its time (median of 5).
    const size_t bytes = size_t(1) << 30;
    void *from = nullptr, *to = nullptr;
    check(cudaMalloc(&from, bytes), "cudaMalloc");
    check(cudaMalloc(&to, bytes), "cudaMalloc");
    cudaEvent_t start, end;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&end), "cudaEventCreate");
    check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
    float best[5];
    for (float &ms : best) {
      check(cudaEventRecord(start, compute), "cudaEventRecord");
      check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, compute), "cudaMemcpyAsync");
      check(cudaEventRecord(end, compute), "cudaEventRecord");
      check(cudaEventSynchronize(end), "cudaEventSynchronize");
      check(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
    }
    std::sort(std::begin(best), std::end(best));
    bandwidth = 2.0 * static_cast<double>(bytes) / (best[2] / 1e3);
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    check(cudaFree(from), "cudaFree");
    check(cudaFree(to), "cudaFree");
  }
  cudaStreamDestroy(compute);
  cudaStreamDestroy(collectives);

  constexpr double kGiB = 1024.0 * 1024 * 1024;
  char head[2048]; // the text below and two device names (at most 256 bytes each)
  std::snprintf(head, sizeof head,
                "# %s as the cuda backend uses it, measured by `--calibrate --backend=cuda`: cuBLAS GEMMs\n"
                "# over m, n, k in 256 .. 8192 (medians of five, CUDA events), a 1 GiB device copy, the\n"
                "# memory cudaMemGetInfo leaves after the CUDA context. Links, peaks and the node: the\n"
                "# dgx-h100 preset's (one GPU cannot measure them); set them for another machine.\n"
                "preset = \"dgx-h100\"\n"
                "name = \"%s (calibrated)\"\n"
                "memory_gb = %.6g  # GiB\n"
                "overhead_gb = %.6g  # the CUDA context and the driver's reserve; not NCCL's buffers\n"
                "memory_bandwidth_gbs = %.6g  # a device-to-device copy, read and written\n"
                "memory_efficiency = 1.0  # the bandwidth above is the measured one\n",
                properties.name, properties.name, static_cast<double>(total) / kGiB,
                static_cast<double>(total - free) / kGiB, bandwidth / 1e9);
  return std::string(head) + "gemm_tflops_bf16 = [\n" + table[0] + "]\ngemm_tflops_tf32 = [\n" + table[1] + "]\n";
}

} // namespace schedc::cuda
