// Gemms implementation: C (m x n) = op(A) op(B), column-major (the row-major tensors seen
// transposed), A and B of one type, C fp32 or that type, fp32 accumulation. FLOPs are counted
// for --stats over the whole step, not per call (no event per GEMM).
#include "cuda/Gemms.h"

#include "backend/Tensors.h"

#include <algorithm>
#include <string>
#include <vector>

namespace schedc::cuda {

Gemms::Gemms(DeviceMemory &memory, cudaStream_t compute, bool tf32) : memory_(memory), compute_(compute) {
  check(cublasCreate(&blas_), "cublasCreate");
  check(cublasSetStream(blas_, compute_), "cublasSetStream");
  workspace_ = copies_.buffer(kWorkspaceBytes / 4, DType::F32);
  check(cublasSetWorkspace(blas_, workspace_->raw(), static_cast<size_t>(workspace_->bytes())), "cublasSetWorkspace");
  if (tf32)
    check(cublasSetMathMode(blas_, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode");
}

Gemms::~Gemms() {
  cublasDestroy(blas_);
  workspace_.reset(); // freed on the compute stream
}

void Gemms::check(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    // diag-coverage: unreachable (cuBLAS fails only on a broken GPU or driver, not for any schedule or option)
    memory_.fail(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

void Gemms::gemm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const Buffer &a,
                 int64_t aAt, int64_t lda, const Buffer &b, int64_t bAt, int64_t ldb, const Buffer &c, int64_t cAt,
                 int64_t ldc) {
  if (m == 0 || n == 0 || k == 0)
    return;
  gemmRaw(ta, tb, m, n, k, a->at(aAt), lda, b->at(bAt), ldb, a->type(), c->at(cAt), ldc, c->type());
  flops_ += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

void Gemms::gemmRaw(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const void *a,
                    int64_t lda, const void *b, int64_t ldb, DType ab, void *c, int64_t ldc, DType ct) {
  const float one = 1.0f, zero = 0.0f;
  int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  int ia = static_cast<int>(lda), ib = static_cast<int>(ldb), ic = static_cast<int>(ldc);
  if (ab == DType::F32 && ct == DType::F32) {
    check(cublasSgemm(blas_, ta, tb, im, in, ik, &one, static_cast<const float *>(a), ia, static_cast<const float *>(b),
                      ib, &zero, static_cast<float *>(c), ic),
          "cublasSgemm");
    return;
  }
  auto cudaType = [](DType t) { return t == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F; };
  check(cublasGemmEx(blas_, ta, tb, im, in, ik, &one, a, cudaType(ab), ia, b, cudaType(ab), ib, &zero, c, cudaType(ct),
                     ic, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

void Gemms::warmUp(int64_t hidden, int64_t tokens, DType low, DType gradients) {
  int64_t h = std::min<int64_t>(hidden, kWarmUpSize), m = std::min<int64_t>(tokens, kWarmUpSize);
  int64_t u = backend::innerUnits(h);
  Buffer w = copies_.zeros(u * 2 * h, low), x = copies_.zeros(m * h, low),
         c = copies_.zeros(2 * h * std::max(m, u), DType::F32);
  // h = x W1 (fp32), y = h W2 and dx = dz W1^T (low), dW = x^T dz (the gradients' type),
  // as forward and backward call them.
  gemmRaw(CUBLAS_OP_T, CUBLAS_OP_N, u, m, h, w->raw(), 2 * h, x->raw(), h, low, c->raw(), u, DType::F32);
  gemmRaw(CUBLAS_OP_N, CUBLAS_OP_N, h, m, u, w->raw(), 2 * h, x->raw(), u, low, c->raw(), h, low);
  gemmRaw(CUBLAS_OP_N, CUBLAS_OP_T, h, u, m, x->raw(), h, x->raw(), u, low, c->raw(), 2 * h, gradients);
  memory_.check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
  memory_.forgetPeak();
}

double Gemms::rate(int64_t m, int64_t n, int64_t k, DType type) {
  Buffer a = copies_.zeros(m * k, type), b = copies_.zeros(k * n, type), c = copies_.zeros(m * n, type);
  auto once = [&] { gemmRaw(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, a->raw(), m, b->raw(), k, type, c->raw(), m, type); };
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  once(); // warm-up: loads the kernel cuBLAS picks for the shape
  std::vector<float> times;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(start, compute_);
    once();
    cudaEventRecord(end, compute_);
    memory_.check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, end);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  std::sort(times.begin(), times.end());
  double seconds = times[times.size() / 2] / 1e3;
  return seconds > 0 ? 2.0 * double(m) * double(n) * double(k) / seconds : 0.0;
}

} // namespace schedc::cuda
