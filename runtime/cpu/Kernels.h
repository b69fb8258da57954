// Kernels — the arithmetic of the model the cpu backend trains: layer l is y = tanh(x W_l)
// without bias; the loss is the mean squared error against the targets over all B
// micro-batches (so gradients of micro-batches add up to the full-batch gradient); the
// optimizer is SGD with momentum, or Adam. GEMMs are OpenBLAS's cblas_sgemm.
//
// bf16 mixed precision is emulated in float32 with rounding where a bf16 run stores a value
// (round to nearest even, as CUDA's __float2bfloat16 does): the weights the GEMMs read (the
// fp32 masters are in the optimizer state), activations, activation gradients, weight
// gradients (unless kept in fp32: --grad-precision=fp32), and the dz = g (1 - y^2) operand
// of the backward GEMMs. Products are accumulated in float32, as tensor cores accumulate
// bf16 products; the optimizer works in fp32 on the masters. The cuda backend stores those
// values as bf16 and rounds at the same points.
#pragma once

#include "backend/Tensors.h"

#include <string>

namespace schedc::cpu {

// The host data real backends share (backend/Tensors.h), by their short names here.
using backend::Dims;
using backend::Flat;
using backend::Optimizer;
using backend::OptState;
using backend::Piece;
using backend::Rows;

// The nearest bf16 value (ties to even), as a float; NaN stays NaN.
float roundToBf16(float v);
// Every element rounded to bf16 when `bf16`, else unchanged.
void roundAll(std::vector<float> &values, bool bf16);

// y = tanh(x W): x is rows x H, w the whole H x H weight; y rounded to bf16 when `bf16`.
std::vector<float> forward(const std::vector<float> &x, int64_t rows, const float *w, int64_t h, bool bf16);
// d(loss)/dy for the rows of `batches` (x in their ascending order), rounded when `bf16`.
std::vector<float> lossGradient(const Dims &d, const std::vector<float> &y, const std::vector<int64_t> &batches,
                                bool bf16);
// Recomputes y = tanh(x W) (a transient) and returns dW = x^T (g * (1 - y^2)) and
// dx = (g * (1 - y^2)) W^T; a null `dw` or `dx` is not computed (a split backward's half).
// With `bf16`, g * (1 - y^2) and dx are rounded to bf16; dW with `bf16Gradients`.
void backward(const std::vector<float> &x, const std::vector<float> &g, int64_t rows, const float *w, int64_t h,
              std::vector<float> *dw, std::vector<float> *dx, bool bf16, bool bf16Gradients);
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
