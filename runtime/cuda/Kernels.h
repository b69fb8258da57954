// Kernels — the cuda backend's element-wise arithmetic (the GEMMs are cuBLAS's, in
// CudaRank): the model's tanh and its derivative (the layer is cpu/Kernels.h's), the loss gradient, the optimizers,
// type conversion, and the deterministic data, made on the device by the same counter-based generator as the cpu
// backend's (cpu/Tensors.cpp), so both backends start from identical weights, inputs and targets. Arithmetic is fp32;
// values typed `DType` are read from and written to fp32 or bf16 (rounded to nearest even, as the cpu backend's bf16
// emulation rounds). Every function enqueues on `stream` and returns at once.
#pragma once

#include "backend/Tensors.h"
#include "cuda/DeviceMemory.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector>

namespace schedc::cuda {

// Elements [begin, begin + count) of layer `layer`'s initial H x H weight (fp32 masters;
// the layout and scales of backend/Tensors.h).
void initialWeight(float *out, const backend::Dims &d, int64_t layer, int64_t begin, int64_t count,
                   cudaStream_t stream);
// The T x H input rows of micro-batch `batch`, stored as `type`.
void inputRows(void *out, DType type, const backend::Dims &d, int64_t batch, cudaStream_t stream);
// out = in, converted (n elements).
void convert(void *out, DType to, const void *in, DType from, int64_t n, cudaStream_t stream);
// y = tanh(z), y stored as `type` (y may be z when `type` is F32).
void tanhInto(void *y, DType type, const float *z, int64_t n, cudaStream_t stream);
// y = g * (1 - y^2), in place over y.
void tanhBackward(float *y, const void *g, DType gType, int64_t n, cudaStream_t stream);
// d(loss)/dy for the T x H blocks of `batches` (y holds them in that order); g and y are `type`.
void lossGradient(void *g, const void *y, DType type, const backend::Dims &d, const std::vector<int64_t> &batches,
                  cudaStream_t stream);
// out = a + b, all `type` (out may be a).
void addInto(void *out, const void *a, const void *b, DType type, int64_t n, cudaStream_t stream);
// Rows of h elements of `type` (a mixture-of-experts layer's token copies, backend/Experts.h):
// out[r] = in[index[r]] (gather), or out[index[r]] = in[r] (scatter), for r < rows; `index`
// is int32 on the device.
void gatherRows(void *out, const void *in, const int32_t *index, int64_t rows, int64_t h, DType type,
                cudaStream_t stream);
void scatterRows(void *out, const void *in, const int32_t *index, int64_t rows, int64_t h, DType type,
                 cudaStream_t stream);
// out[r] = the sum over j < k of in[r k + j] (rows of h elements; fp32 sums, stored as `type`).
void sumCopies(void *out, const void *in, int64_t rows, int64_t k, int64_t h, DType type, cudaStream_t stream);
// y[i] *= mask[i] (fp32).
void multiplyBy(float *y, const float *mask, int64_t n, cudaStream_t stream);
// One optimizer step on a slice of fp32 masters and moments with a gradient of `gType`
// (`step` steps were taken before; Adam's bias correction).
void optimizerStep(const backend::Optimizer &o, int64_t step, float *w, float *m, float *v, const void *g, DType gType,
                   int64_t n, cudaStream_t stream);

} // namespace schedc::cuda
