// Kernels implementation: one thread per element, grid-stride loops, templates over the
// element type (float or __nv_bfloat16) behind the DType-taking entry points. The generator
// is cpu/Tensors.cpp's splitmix64 over (seed, stream, index, element), bit for bit.
#include "cuda/Kernels.h"

#include <cmath>
#include <cuda_bf16.h>
#include <type_traits>

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

uint64_t streamKey(const backend::Dims &d, uint64_t kind, uint64_t index) {
  return mix(mix(mix(d.seed) ^ kind) ^ index);
}

// Reading and writing an element of either type; arithmetic is fp32.
__device__ float load(const float *p, int64_t i) {
  return p[i];
}
__device__ float load(const __nv_bfloat16 *p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ void store(float *p, int64_t i, float v) {
  p[i] = v;
}
__device__ void store(__nv_bfloat16 *p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

#define SCHEDC_EACH(i, n)                                                                                              \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(blockDim.x) * gridDim.x)

template <class T> __global__ void generate(T *out, uint64_t key, uint64_t first, int64_t n, float scale) {
  SCHEDC_EACH(i, n) store(out, i, uniform(key, first + static_cast<uint64_t>(i), scale));
}

// A layer's initial weight: each unit's first h elements (W1's column) and last h (W2's
// row) at their own scales (backend/Tensors.h).
__global__ void generateWeight(float *out, uint64_t key, uint64_t first, int64_t n, int64_t h, float w1Scale,
                               float w2Scale) {
  SCHEDC_EACH(i, n) {
    uint64_t element = first + static_cast<uint64_t>(i);
    out[i] =
        uniform(key, element, element % static_cast<uint64_t>(2 * h) < static_cast<uint64_t>(h) ? w1Scale : w2Scale);
  }
}

template <class To, class From> __global__ void convertKernel(To *out, const From *in, int64_t n) {
  SCHEDC_EACH(i, n) store(out, i, load(in, i));
}

template <class T> __global__ void tanhKernel(T *y, const float *z, int64_t n) {
  SCHEDC_EACH(i, n) store(y, i, tanhf(z[i]));
}

template <class G> __global__ void tanhBackwardKernel(float *y, const G *g, int64_t n) {
  SCHEDC_EACH(i, n) y[i] = load(g, i) * (1.0f - y[i] * y[i]);
}

template <class T> __global__ void lossKernel(T *g, const T *y, uint64_t key, int64_t n, float scale) {
  SCHEDC_EACH(i, n) store(g, i, scale * (load(y, i) - uniform(key, static_cast<uint64_t>(i), 0.5f)));
}

template <class T> __global__ void addKernel(T *out, const T *a, const T *b, int64_t n) {
  SCHEDC_EACH(i, n) store(out, i, load(a, i) + load(b, i));
}

template <class G> __global__ void sgdKernel(float *w, float *m, const G *g, int64_t n, float lr, float momentum) {
  SCHEDC_EACH(i, n) {
    m[i] = momentum * m[i] + load(g, i);
    w[i] -= lr * m[i];
  }
}

template <class G>
__global__ void adamKernel(float *w, float *m, float *v, const G *g, int64_t n, float lr, float b1, float b2, float eps,
                           float c1, float c2) {
  SCHEDC_EACH(i, n) {
    float gi = load(g, i);
    m[i] = b1 * m[i] + (1 - b1) * gi;
    v[i] = b2 * v[i] + (1 - b2) * gi * gi;
    w[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
  }
}

template <class T> __global__ void gatherKernel(T *out, const T *in, const int32_t *index, int64_t n, int64_t h) {
  SCHEDC_EACH(i, n) out[i] = in[static_cast<int64_t>(index[i / h]) * h + i % h];
}

template <class T> __global__ void scatterKernel(T *out, const T *in, const int32_t *index, int64_t n, int64_t h) {
  SCHEDC_EACH(i, n) out[static_cast<int64_t>(index[i / h]) * h + i % h] = in[i];
}

template <class T> __global__ void sumCopiesKernel(T *out, const T *in, int64_t n, int64_t k, int64_t h) {
  SCHEDC_EACH(i, n) {
    int64_t row = i / h, col = i % h;
    float sum = 0;
    for (int64_t j = 0; j < k; ++j)
      sum += load(in, (row * k + j) * h + col);
    store(out, i, sum);
  }
}

__global__ void multiplyKernel(float *y, const float *mask, int64_t n) {
  SCHEDC_EACH(i, n) y[i] *= mask[i];
}

#undef SCHEDC_EACH

// Calls `f` with a null pointer of the C++ type of `t` (to pick a template instance).
template <class F> void byType(DType t, F f) {
  if (t == DType::BF16)
    f(static_cast<__nv_bfloat16 *>(nullptr));
  else
    f(static_cast<float *>(nullptr));
}

} // namespace

void initialWeight(float *out, const backend::Dims &d, int64_t layer, int64_t begin, int64_t count,
                   cudaStream_t stream) {
  generateWeight<<<blocks(count), kThreads, 0, stream>>>(
      out, streamKey(d, 1, static_cast<uint64_t>(layer)), static_cast<uint64_t>(begin), count, d.hidden,
      backend::initialWeightScale(d, 0), backend::initialWeightScale(d, d.hidden));
}

void inputRows(void *out, DType type, const backend::Dims &d, int64_t batch, cudaStream_t stream) {
  int64_t n = d.tokens * d.hidden;
  uint64_t key = streamKey(d, 2, static_cast<uint64_t>(batch));
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    generate<<<blocks(n), kThreads, 0, stream>>>(static_cast<T *>(out), key, 0, n, 1.0f);
  });
}

void convert(void *out, DType to, const void *in, DType from, int64_t n, cudaStream_t stream) {
  if (n <= 0)
    return;
  byType(to, [&](auto *o) {
    byType(from, [&](auto *i) {
      using To = std::remove_pointer_t<decltype(o)>;
      using From = std::remove_pointer_t<decltype(i)>;
      convertKernel<<<blocks(n), kThreads, 0, stream>>>(static_cast<To *>(out), static_cast<const From *>(in), n);
    });
  });
}

void tanhInto(void *y, DType type, const float *z, int64_t n, cudaStream_t stream) {
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    tanhKernel<<<blocks(n), kThreads, 0, stream>>>(static_cast<T *>(y), z, n);
  });
}

void tanhBackward(float *y, const void *g, DType gType, int64_t n, cudaStream_t stream) {
  byType(gType, [&](auto *t) {
    using G = std::remove_pointer_t<decltype(t)>;
    tanhBackwardKernel<<<blocks(n), kThreads, 0, stream>>>(y, static_cast<const G *>(g), n);
  });
}

void lossGradient(void *g, const void *y, DType type, const backend::Dims &d, const std::vector<int64_t> &batches,
                  cudaStream_t stream) {
  // loss = sum over all B micro-batches of |y - target|^2 / (B T H), as the cpu backend.
  float scale = 2.0f / static_cast<float>(d.batches * d.tokens * d.hidden);
  int64_t block = d.tokens * d.hidden;
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    for (size_t k = 0; k < batches.size(); ++k)
      lossKernel<<<blocks(block), kThreads, 0, stream>>>(
          static_cast<T *>(g) + k * block, static_cast<const T *>(y) + k * block,
          streamKey(d, 3, static_cast<uint64_t>(batches[k])), block, scale);
  });
}

void addInto(void *out, const void *a, const void *b, DType type, int64_t n, cudaStream_t stream) {
  if (n <= 0)
    return;
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    addKernel<<<blocks(n), kThreads, 0, stream>>>(static_cast<T *>(out), static_cast<const T *>(a),
                                                  static_cast<const T *>(b), n);
  });
}

void gatherRows(void *out, const void *in, const int32_t *index, int64_t rows, int64_t h, DType type,
                cudaStream_t stream) {
  if (rows * h <= 0)
    return;
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    gatherKernel<<<blocks(rows * h), kThreads, 0, stream>>>(static_cast<T *>(out), static_cast<const T *>(in), index,
                                                            rows * h, h);
  });
}

void scatterRows(void *out, const void *in, const int32_t *index, int64_t rows, int64_t h, DType type,
                 cudaStream_t stream) {
  if (rows * h <= 0)
    return;
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    scatterKernel<<<blocks(rows * h), kThreads, 0, stream>>>(static_cast<T *>(out), static_cast<const T *>(in), index,
                                                             rows * h, h);
  });
}

void sumCopies(void *out, const void *in, int64_t rows, int64_t k, int64_t h, DType type, cudaStream_t stream) {
  if (rows * h <= 0)
    return;
  byType(type, [&](auto *t) {
    using T = std::remove_pointer_t<decltype(t)>;
    sumCopiesKernel<<<blocks(rows * h), kThreads, 0, stream>>>(static_cast<T *>(out), static_cast<const T *>(in),
                                                               rows * h, k, h);
  });
}

void multiplyBy(float *y, const float *mask, int64_t n, cudaStream_t stream) {
  if (n > 0)
    multiplyKernel<<<blocks(n), kThreads, 0, stream>>>(y, mask, n);
}

void optimizerStep(const backend::Optimizer &o, int64_t step, float *w, float *m, float *v, const void *g, DType gType,
                   int64_t n, cudaStream_t stream) {
  if (n <= 0)
    return;
  double t = static_cast<double>(step + 1);
  float c1 = static_cast<float>(1 - std::pow(o.beta1, t)), c2 = static_cast<float>(1 - std::pow(o.beta2, t));
  byType(gType, [&](auto *p) {
    using G = std::remove_pointer_t<decltype(p)>;
    const G *grad = static_cast<const G *>(g);
    if (o.kind == backend::Optimizer::Sgd)
      sgdKernel<<<blocks(n), kThreads, 0, stream>>>(w, m, grad, n, o.lr, o.momentum);
    else
      adamKernel<<<blocks(n), kThreads, 0, stream>>>(w, m, v, grad, n, o.lr, o.beta1, o.beta2, o.epsilon, c1, c2);
  });
}

} // namespace schedc::cuda
