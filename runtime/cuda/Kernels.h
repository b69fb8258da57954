// Kernels — the cuda backend's element-wise arithmetic (the GEMMs are cuBLAS's, in
// CudaRank): the model's tanh and its derivative, the loss gradient, the optimizers, and the
// deterministic data, made on the device by the same counter-based generator as the cpu
// backend's (cpu/Tensors.cpp), so both backends start from identical weights, inputs and
// targets. Every function enqueues on `stream` and returns at once.
#pragma once

#include "cpu/Kernels.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector>

namespace schedc::cuda {

// Elements [begin, begin + count) of layer `layer`'s initial H x H weight.
void initialWeight(float *out, const cpu::Dims &d, int64_t layer, int64_t begin, int64_t count, cudaStream_t stream);
// The T x H input rows of micro-batch `batch`.
void inputRows(float *out, const cpu::Dims &d, int64_t batch, cudaStream_t stream);
// y = tanh(y), in place.
void tanhInPlace(float *y, int64_t n, cudaStream_t stream);
// dz = g * (1 - y^2), in place over y.
void tanhBackward(float *y, const float *g, int64_t n, cudaStream_t stream);
// d(loss)/dy for the T x H blocks of `batches` (y holds them in that order).
void lossGradient(float *g, const float *y, const cpu::Dims &d, const std::vector<int64_t> &batches,
                  cudaStream_t stream);
// a += b.
void addInPlace(float *a, const float *b, int64_t n, cudaStream_t stream);
// One optimizer step on a slice (`step` steps were taken before; Adam's bias correction).
void optimizerStep(const cpu::Optimizer &o, int64_t step, float *w, float *m, float *v, const float *g, int64_t n,
                   cudaStream_t stream);

} // namespace schedc::cuda
