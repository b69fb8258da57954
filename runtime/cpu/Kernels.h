// Kernels — the arithmetic of the model the cpu backend trains: layer l is y = tanh(x W_l)
// without bias; the loss is the mean squared error against the targets over all B
// micro-batches (so gradients of micro-batches add up to the full-batch gradient); the
// optimizer is SGD with momentum, or Adam. GEMMs are OpenBLAS's cblas_sgemm.
#pragma once

#include "cpu/Tensors.h"

#include <string>

namespace schedc::cpu {

struct Optimizer {
  enum Kind { Sgd, Adam } kind = Sgd;
  float lr = 0.1f;                                     // Adam runs use 0.001
  float momentum = 0.9f;                               // SGD
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f; // Adam
  int moments() const { return kind == Adam ? 2 : 1; }
};

// y = tanh(x W): x is rows x H, w the whole H x H weight.
std::vector<float> forward(const std::vector<float> &x, int64_t rows, const float *w, int64_t h);
// d(loss)/dy for the rows of `batches` (x in their ascending order).
std::vector<float> lossGradient(const Dims &d, const std::vector<float> &y, const std::vector<int64_t> &batches);
// Recomputes y = tanh(x W) (a transient) and returns dW = x^T (g * (1 - y^2)) and
// dx = (g * (1 - y^2)) W^T; a null `dw` or `dx` is not computed (a split backward's half).
void backward(const std::vector<float> &x, const std::vector<float> &g, int64_t rows, const float *w, int64_t h,
              std::vector<float> *dw, std::vector<float> *dx);
// One optimizer step on a slice: w, the moments and g have the same length. `step` is the
// number of steps taken before (Adam's bias correction).
void optimizerStep(const Optimizer &o, int64_t step, std::vector<float> &w, std::vector<std::vector<float> *> moments,
                   const std::vector<float> &g);

// The GEMM rate this machine's BLAS reaches on n x n (for the benchmark), in GFLOP/s.
double measureSgemm(int64_t n, int repeats);

// The GEMM work this process did: floating-point operations and seconds inside sgemm.
struct GemmStats {
  double flops = 0;
  double seconds = 0;
};
const GemmStats &gemmStats();

} // namespace schedc::cpu
