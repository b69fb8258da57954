// Kernels — the arithmetic of the model the cpu backend trains: layer l is the two-matrix
// block y = tanh(x W1) W2 without biases (W1 H x I, W2 I x H, I = H/2 inner units: H x H
// parameters; the weight's layout in backend/Tensors.h). The units [u0, u0 + n) of a
// tensor-parallel part compute the part's partial sum tanh(x W1[:, u0..]) W2[u0.., :] —
// Megatron-LM's column-parallel then row-parallel MLP — so the parts' sum is the whole
// layer's output; the whole layer is the part that holds every unit. The loss is the mean squared error against the
// targets over all B micro-batches (so gradients of micro-batches add up to the full-batch gradient); the optimizer is
// SGD with momentum, or Adam. GEMMs are OpenBLAS's cblas_sgemm.
//
// bf16 mixed precision is emulated in float32 with rounding where a bf16 run stores a value
// (round to nearest even, as CUDA's __float2bfloat16 does): the weights the GEMMs read (the
// fp32 masters are in the optimizer state), activations, activation gradients, weight
// gradients (unless kept in fp32: --grad-precision=fp32), and the operands h = tanh(x W1)
// and dz = (g W2ᵀ) (1 - h²) of the second and the backward GEMMs. Products are accumulated in float32, as tensor cores
// accumulate bf16 products; the optimizer works in fp32 on the masters. The cuda backend stores those values as bf16
// and rounds at the same points.
#pragma once

#include "backend/Tensors.h"

#include <array>
#include <map>
#include <string>

namespace schedc::cpu {

// The host data real backends share (backend/Tensors.h), by their short names here.
using backend::Dims;
using backend::Flat;
using backend::innerUnits;
using backend::Optimizer;
using backend::OptState;
using backend::Piece;
using backend::Rows;
using backend::unitElements;

// The rows `r` holds (not copied), or `zeros` made to stand in for missing data (a wrong
// schedule forced with --no-verify).
const std::vector<float> &rowsOrZeros(const Rows *r, int64_t expectedRows, int64_t h, std::vector<float> &zeros);

// The nearest bf16 value (ties to even), as a float; NaN stays NaN.
float roundToBf16(float v);
// Every element rounded to bf16 when `bf16`, else unchanged.
void roundAll(std::vector<float> &values, bool bf16);

// y = tanh(x W1) W2 over `units` inner units whose weights start at `w` (a whole layer's
// weight, or a tensor-parallel part's): x is rows x H, y rows x H (a partial sum when the
// units are a part); y rounded to bf16 when `bf16`. A `mask` (rows x units of 0 and 1:
// backend/Experts.h) keeps each row to its experts' units: h = tanh(x W1) * mask.
std::vector<float> forward(const std::vector<float> &x, int64_t rows, const float *w, int64_t units, int64_t h,
                           bool bf16, const float *mask = nullptr);
// d(loss)/dy for the rows of `batches` (x in their ascending order), rounded when `bf16`.
std::vector<float> lossGradient(const Dims &d, const std::vector<float> &y, const std::vector<int64_t> &batches,
                                bool bf16);
// The backward of those units for the output's gradient g (whole: every part gets all of
// it): recomputes h = tanh(x W1) (a transient, as the activation kept is the layer's input
// only), dz = (g W2ᵀ)(1 - h²), and returns the units' weight gradient dw (dW1 = xᵀ dz,
// dW2 = hᵀ g, in the weight's layout) and dx = dz W1ᵀ (a partial sum for a part); a null
// `dw` or `dx` is not computed (a split backward's half). With `bf16`, h, dz and dx are
// rounded to bf16; dw with `bf16Gradients`. With a `mask`, of the forward's masked h.
void backward(const std::vector<float> &x, const std::vector<float> &g, int64_t rows, const float *w, int64_t units,
              int64_t h, std::vector<float> *dw, std::vector<float> *dx, bool bf16, bool bf16Gradients,
              const float *mask = nullptr);
// One optimizer step on a slice: w, the moments and g have the same length. `step` is the
// number of steps taken before (Adam's bias correction).
void optimizerStep(const Optimizer &o, int64_t step, std::vector<float> &w, std::vector<std::vector<float> *> moments,
                   const std::vector<float> &g);

// The GEMM rate this machine's BLAS reaches on n x n (for the benchmark), in GFLOP/s.
double measureSgemm(int64_t n, int repeats);

// The GEMM work this process did: floating-point operations and seconds inside sgemm, in
// all and by shape (m, n, k).
struct GemmStats {
  struct Work {
    double flops = 0;
    double seconds = 0;
  };
  double flops = 0;
  double seconds = 0;
  std::map<std::array<int, 3>, Work> byShape;
};
const GemmStats &gemmStats();

// Stops OpenBLAS's worker threads, if this BLAS is OpenBLAS (its blas_thread_shutdown_, which
// its fork handler calls; a weak reference, so another BLAS links too). They start with the
// process and spin on sched_yield for a while waiting for work: a run on the sim backend does
// no linear algebra, and the spinning takes a processor from the ranks' threads
// (docs/performance.md). OpenBLAS starts them again at its next threaded call.
void stopBlasThreads();

} // namespace schedc::cpu
