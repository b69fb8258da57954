// Kernels implementation.
#include "cpu/Kernels.h"

#include <cblas.h>
#include <chrono>
#include <cmath>
#include <cstring>

extern "C" int blas_thread_shutdown_(void); // OpenBLAS's; see stopBlasThreads
#pragma weak blas_thread_shutdown_

namespace schedc::cpu {

void stopBlasThreads() {
  if (blas_thread_shutdown_)
    blas_thread_shutdown_();
}

namespace {
GemmStats stats;

// cblas_sgemm, timed and counted.
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
          float *c, int ldc) {
  auto start = std::chrono::steady_clock::now();
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double flops = 2.0 * m * n * k;
  stats.seconds += seconds;
  stats.flops += flops;
  GemmStats::Work &shape = stats.byShape[{m, n, k}];
  shape.seconds += seconds;
  shape.flops += flops;
}
} // namespace

const GemmStats &gemmStats() {
  return stats;
}

const std::vector<float> &rowsOrZeros(const Rows *r, int64_t expectedRows, int64_t h, std::vector<float> &zeros) {
  if (r && r->rows == expectedRows)
    return r->values;
  zeros.assign(static_cast<size_t>(expectedRows * h), 0.0f);
  return zeros;
}

float roundToBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu)) // NaN: keep it quiet
    bits |= 0x00400000u;
  else
    bits += 0x7fffu + ((bits >> 16) & 1u); // to nearest, ties to even
  bits &= 0xffff0000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

void roundAll(std::vector<float> &values, bool bf16) {
  if (bf16)
    for (float &v : values)
      v = roundToBf16(v);
}

namespace {
// h = tanh(x W1) over the units: rows x units, in float32, times `mask` where there is one.
std::vector<float> innerActivations(const std::vector<float> &x, int64_t rows, const float *w, int64_t units, int64_t h,
                                    const float *mask) {
  std::vector<float> a(static_cast<size_t>(rows * units), 0.0f);
  if (rows > 0 && units > 0)
    gemm(CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(units), static_cast<int>(h), x.data(),
         static_cast<int>(h), w, static_cast<int>(unitElements(h)), a.data(), static_cast<int>(units));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = mask ? std::tanh(a[i]) * mask[i] : std::tanh(a[i]);
  return a;
}
} // namespace

std::vector<float> forward(const std::vector<float> &x, int64_t rows, const float *w, int64_t units, int64_t h,
                           bool bf16, const float *mask) {
  std::vector<float> inner = innerActivations(x, rows, w, units, h, mask);
  roundAll(inner, bf16); // a GEMM operand
  std::vector<float> y(static_cast<size_t>(rows * h), 0.0f);
  if (rows > 0 && units > 0) // y = h W2, W2's rows are the units' second halves
    gemm(CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(h), static_cast<int>(units), inner.data(),
         static_cast<int>(units), w + h, static_cast<int>(unitElements(h)), y.data(), static_cast<int>(h));
  roundAll(y, bf16);
  return y;
}

std::vector<float> lossGradient(const Dims &d, const std::vector<float> &y, const std::vector<int64_t> &batches,
                                bool bf16) {
  // loss = sum over all B micro-batches of |y - target|^2 / (B T H)
  float scale = 2.0f / static_cast<float>(d.batches * d.tokens * d.hidden);
  std::vector<float> g(y.size());
  size_t block = static_cast<size_t>(d.tokens * d.hidden);
  for (size_t k = 0; k < batches.size(); ++k) {
    std::vector<float> t = targetRows(d, batches[k]);
    for (size_t i = 0; i < block; ++i)
      g[k * block + i] = scale * (y[k * block + i] - t[i]);
  }
  roundAll(g, bf16);
  return g;
}

void backward(const std::vector<float> &x, const std::vector<float> &g, int64_t rows, const float *w, int64_t units,
              int64_t h, std::vector<float> *dw, std::vector<float> *dx, bool bf16, bool bf16Gradients,
              const float *mask) {
  int ir = static_cast<int>(rows), iu = static_cast<int>(units), ih = static_cast<int>(h);
  int unit = static_cast<int>(unitElements(h));
  bool any = rows > 0 && units > 0;
  std::vector<float> inner = innerActivations(x, rows, w, units, h, mask); // recomputed (a transient)
  std::vector<float> dz(inner.size(), 0.0f);
  if (any) // g W2ᵀ
    gemm(CblasNoTrans, CblasTrans, ir, iu, ih, g.data(), ih, w + h, unit, dz.data(), iu);
  for (size_t i = 0; i < dz.size(); ++i) // a masked unit's h is 0, its derivative 0 too
    dz[i] *= mask ? (1.0f - inner[i] * inner[i]) * mask[i] : 1.0f - inner[i] * inner[i];
  roundAll(dz, bf16); // GEMM operands, as the forward rounded h
  roundAll(inner, bf16);
  if (dw) {
    dw->assign(static_cast<size_t>(units * unit), 0.0f);
    if (any) { // unit j: dW1[:, j] = xᵀ dz[:, j], then dW2[j, :] = h[:, j]ᵀ g
      gemm(CblasTrans, CblasNoTrans, iu, ih, ir, dz.data(), iu, x.data(), ih, dw->data(), unit);
      gemm(CblasTrans, CblasNoTrans, iu, ih, ir, inner.data(), iu, g.data(), ih, dw->data() + h, unit);
    }
    roundAll(*dw, bf16Gradients);
  }
  if (dx) {
    dx->assign(static_cast<size_t>(rows * h), 0.0f);
    if (any) // dz W1ᵀ, W1ᵀ's rows are the units' first halves
      gemm(CblasNoTrans, CblasNoTrans, ir, ih, iu, dz.data(), iu, w, unit, dx->data(), ih);
    roundAll(*dx, bf16);
  }
}

void optimizerStep(const Optimizer &o, int64_t step, std::vector<float> &w, std::vector<std::vector<float> *> moments,
                   const std::vector<float> &g) {
  if (o.kind == Optimizer::Sgd) {
    std::vector<float> &m = *moments[0];
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] = o.momentum * m[i] + g[i];
      w[i] -= o.lr * m[i];
    }
    return;
  }
  std::vector<float> &m = *moments[0], &v = *moments[1];
  double t = static_cast<double>(step + 1);
  float c1 = static_cast<float>(1 - std::pow(o.beta1, t)), c2 = static_cast<float>(1 - std::pow(o.beta2, t));
  for (size_t i = 0; i < w.size(); ++i) {
    m[i] = o.beta1 * m[i] + (1 - o.beta1) * g[i];
    v[i] = o.beta2 * v[i] + (1 - o.beta2) * g[i] * g[i];
    w[i] -= o.lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + o.epsilon);
  }
}

double measureSgemm(int64_t n, int repeats) {
  std::vector<float> a(static_cast<size_t>(n * n), 0.5f), b(a), c(a.size());
  int in = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a.data(), in, b.data(), in, 0.0f, c.data(),
              in); // warm up
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a.data(), in, b.data(), in, 0.0f, c.data(),
                in);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return 2.0 * double(n) * double(n) * double(n) * repeats / seconds / 1e9;
}

} // namespace schedc::cpu
