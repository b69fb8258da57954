// Kernels implementation: one thread per element, grid-stride loops. The generator is
// cpu/Tensors.cpp's splitmix64 over (seed, stream, index, element), bit for bit.
#include "cuda/Kernels.h"

#include <cmath>

namespace schedc::cuda {

namespace {

constexpr int kThreads = 256;

int blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

__host__ __device__ uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The value in [-scale, scale) of element i of stream (kind, index): `key` is
// mix(mix(mix(seed) ^ kind) ^ index), computed once on the host.
__device__ float uniform(uint64_t key, uint64_t i, float scale) {
  double u = static_cast<double>(mix(key ^ i) >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>((2 * u - 1) * scale);
}

uint64_t streamKey(const cpu::Dims &d, uint64_t kind, uint64_t index) {
  return mix(mix(mix(d.seed) ^ kind) ^ index);
}

__global__ void generate(float *out, uint64_t key, uint64_t first, int64_t n, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x)
    out[i] = uniform(key, first + static_cast<uint64_t>(i), scale);
}

__global__ void tanhKernel(float *y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x)
    y[i] = tanhf(y[i]);
}

__global__ void tanhBackwardKernel(float *y, const float *g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x)
    y[i] = g[i] * (1.0f - y[i] * y[i]);
}

__global__ void lossKernel(float *g, const float *y, uint64_t key, int64_t n, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x)
    g[i] = scale * (y[i] - uniform(key, static_cast<uint64_t>(i), 0.5f));
}

__global__ void addKernel(float *a, const float *b, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x)
    a[i] += b[i];
}

__global__ void sgdKernel(float *w, float *m, const float *g, int64_t n, float lr, float momentum) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x) {
    m[i] = momentum * m[i] + g[i];
    w[i] -= lr * m[i];
  }
}

__global__ void adamKernel(float *w, float *m, float *v, const float *g, int64_t n, float lr, float b1, float b2,
                           float eps, float c1, float c2) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    w[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
  }
}

} // namespace

void initialWeight(float *out, const cpu::Dims &d, int64_t layer, int64_t begin, int64_t count, cudaStream_t stream) {
  float scale = 1.0f / std::sqrt(static_cast<float>(d.hidden));
  generate<<<blocks(count), kThreads, 0, stream>>>(out, streamKey(d, 1, static_cast<uint64_t>(layer)),
                                                   static_cast<uint64_t>(begin), count, scale);
}

void inputRows(float *out, const cpu::Dims &d, int64_t batch, cudaStream_t stream) {
  int64_t n = d.tokens * d.hidden;
  generate<<<blocks(n), kThreads, 0, stream>>>(out, streamKey(d, 2, static_cast<uint64_t>(batch)), 0, n, 1.0f);
}

void tanhInPlace(float *y, int64_t n, cudaStream_t stream) {
  tanhKernel<<<blocks(n), kThreads, 0, stream>>>(y, n);
}

void tanhBackward(float *y, const float *g, int64_t n, cudaStream_t stream) {
  tanhBackwardKernel<<<blocks(n), kThreads, 0, stream>>>(y, g, n);
}

void lossGradient(float *g, const float *y, const cpu::Dims &d, const std::vector<int64_t> &batches,
                  cudaStream_t stream) {
  // loss = sum over all B micro-batches of |y - target|^2 / (B T H), as the cpu backend.
  float scale = 2.0f / static_cast<float>(d.batches * d.tokens * d.hidden);
  int64_t block = d.tokens * d.hidden;
  for (size_t k = 0; k < batches.size(); ++k)
    lossKernel<<<blocks(block), kThreads, 0, stream>>>(g + k * block, y + k * block,
                                                       streamKey(d, 3, static_cast<uint64_t>(batches[k])), block,
                                                       scale);
}

void addInPlace(float *a, const float *b, int64_t n, cudaStream_t stream) {
  addKernel<<<blocks(n), kThreads, 0, stream>>>(a, b, n);
}

void optimizerStep(const cpu::Optimizer &o, int64_t step, float *w, float *m, float *v, const float *g, int64_t n,
                   cudaStream_t stream) {
  if (o.kind == cpu::Optimizer::Sgd) {
    sgdKernel<<<blocks(n), kThreads, 0, stream>>>(w, m, g, n, o.lr, o.momentum);
    return;
  }
  double t = static_cast<double>(step + 1);
  float c1 = static_cast<float>(1 - std::pow(o.beta1, t)), c2 = static_cast<float>(1 - std::pow(o.beta2, t));
  adamKernel<<<blocks(n), kThreads, 0, stream>>>(w, m, v, g, n, o.lr, o.beta1, o.beta2, o.epsilon, c1, c2);
}

} // namespace schedc::cuda
