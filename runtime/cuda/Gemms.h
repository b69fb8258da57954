// Gemms — the cuda backend's GEMMs: one cuBLAS handle on the compute stream, its workspace
// given up front (and counted by DeviceMemory: left alone, cuBLAS allocates one with
// cudaMalloc at its first GEMM, and an allocation can wait for the NCCL kernels in flight);
// fp32 operands through cublasSgemm (TF32 tensor cores with --tf32), bf16 ones through
// cublasGemmEx accumulating in fp32; the FLOPs they computed (for --stats); the warm-up that
// loads cuBLAS's kernels before the step's clock starts; and cuBLAS's own rate at a size.
#pragma once

#include "cuda/DeviceCopies.h"
#include "cuda/DeviceMemory.h"

#include <cstdint>
#include <cublas_v2.h>

namespace schedc::cuda {

class Gemms {
public:
  Gemms(DeviceMemory &memory, cudaStream_t compute, bool tf32);
  ~Gemms();
  Gemms(const Gemms &) = delete;
  Gemms &operator=(const Gemms &) = delete;

  // c = op(a) op(b), column-major as cuBLAS sees it, each operand given by its buffer, the
  // element it starts at and its leading dimension; its FLOPs are counted.
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const Buffer &a, int64_t aAt,
            int64_t lda, const Buffer &b, int64_t bAt, int64_t ldb, const Buffer &c, int64_t cAt, int64_t ldc);
  // The same on raw device pointers, `a` and `b` of type `ab`, `c` of type `ct`; not counted.
  void gemmRaw(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
               const void *b, int64_t ldb, DType ab, void *c, int64_t ldc, DType ct);
  // Before the clock starts: the first GEMM of each kind a step makes loads cuBLAS's code
  // for it (CUDA loads modules lazily), a cost a training loop pays once, not every step.
  // One GEMM of each kind the layers of `hidden` and `tokens` make (operands `low`, weight
  // gradients `gradients`), at their sizes up to H = T = 8192 (at most 1 GiB of scratch
  // buffers, kept in the pool for the step's own; cuBLAS picks its kernels by size); the
  // allocator's peak then forgets them.
  void warmUp(int64_t hidden, int64_t tokens, DType low, DType gradients);
  // cuBLAS's own rate on n x n x n, operands and result `type`, in GFLOP/s; and on
  // m x n x k (column-major, no transposes), in FLOP/s: the median of five timed after one.
  double referenceRate(int64_t n, DType type) { return rate(n, n, n, type) / 1e9; }
  double rate(int64_t m, int64_t n, int64_t k, DType type);
  // The FLOPs gemm() computed so far.
  double flops() const { return flops_; }

private:
  void check(cublasStatus_t s, const char *what);

  DeviceMemory &memory_;
  cudaStream_t compute_;
  DeviceCopies copies_{memory_, compute_}; // its scratch buffers, on the compute stream
  cublasHandle_t blas_ = nullptr;
  Buffer workspace_;
  double flops_ = 0;
  static constexpr int64_t kWorkspaceBytes = 32 << 20; // what cuBLAS asks for on Hopper
  static constexpr int64_t kWarmUpSize = 8192;         // warmUp's largest H and T
};

} // namespace schedc::cuda
