// CudaRank implementation. Device data mirrors the cpu backend's: weights, optimizer states
// and weight gradients as pieces of the flat H x H array (a shard costs its elements),
// activations as T rows of width H per micro-batch. Values are immutable once made (one
// payload may sit in several storage slots), so every operation writes new buffers. Missing
// data (a wrong schedule forced with --no-verify) reads as zeros.
#include "cuda/CudaRank.h"

#include "backend/Payload.h"
#include "cuda/DeviceMemory.h"
#include "cuda/Kernels.h"
#include "cuda/Nccl.h"

#include <algorithm>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace schedc::cuda {

namespace {

using sim::Kind;
using sim::ValuePtr;
using ValuePair = std::pair<ValuePtr, ValuePtr>;

struct DevicePiece {
  int64_t begin = 0;
  Buffer values;
  int64_t count() const { return values ? values->count() : 0; }
};
struct DeviceFlat {
  std::vector<DevicePiece> pieces;
  int64_t elements() const {
    int64_t n = 0;
    for (const DevicePiece &p : pieces)
      n += p.count();
    return n;
  }
};
struct DeviceOpt {
  std::vector<DeviceFlat> moments;
};
struct DeviceRows {
  int64_t rows = 0;
  Buffer values;
};

using backend::attach;
using P = backend::Payloads<DeviceFlat, DeviceOpt, DeviceRows>;

class CudaRank final : public backend::ComputeRank {
public:
  CudaRank(const cpu::Dims &dims, const cpu::Optimizer &optimizer, bool tf32, cpu::Comm &comm, cudaStream_t stream)
      : ComputeRank(dims, comm), o_(optimizer), stream_(stream),
        memory_(stream, [this](const std::string &what) { comm_.abort("cuda backend: " + what); }),
        nccl_(comm, memory_) {
    checkBlas(cublasCreate(&blas_), "cublasCreate");
    checkBlas(cublasSetStream(blas_, stream_), "cublasSetStream");
    if (tf32)
      checkBlas(cublasSetMathMode(blas_, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode");
    checkCuda(cudaEventCreate(&stepStart_), "cudaEventCreate");
    checkCuda(cudaEventRecord(stepStart_, stream_), "cudaEventRecord");
  }
  ~CudaRank() override {
    cudaStreamSynchronize(stream_);
    cudaEventDestroy(stepStart_);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_); // every buffer went with the run's values
  }

  ValuePtr loadWeight(const ValuePtr &meta) override {
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    Buffer b = buffer(count);
    initialWeight(b->data(), d_, meta->layer, begin, count, stream_);
    return P::withFlat(meta, DeviceFlat{{DevicePiece{begin, b}}});
  }

  ValuePtr loadOptState(const ValuePtr &meta) override {
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    auto state = std::make_shared<DeviceOpt>();
    for (int k = 0; k < o_.moments(); ++k)
      state->moments.push_back(DeviceFlat{{DevicePiece{begin, zeros(count)}}});
    return attach<DeviceOpt>(meta, state, count * o_.moments());
  }

  ValuePtr input(const ValuePtr &meta) override {
    const std::vector<int64_t> &batches = meta->batches->elements();
    int64_t block = d_.tokens * d_.hidden;
    Buffer b = buffer(block * static_cast<int64_t>(batches.size()));
    for (size_t k = 0; k < batches.size(); ++k)
      inputRows(b->data() + static_cast<int64_t>(k) * block, d_, batches[k], stream_);
    return P::withRows(meta, DeviceRows{d_.tokens * static_cast<int64_t>(batches.size()), b}, d_.hidden);
  }

  ValuePtr forward(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &w) override {
    int64_t m = rowCount(meta);
    Buffer scratch;
    const float *weight = wholeWeight(P::flat(w), scratch);
    Buffer x = rowsOf(P::rows(a), m), y = buffer(m * d_.hidden);
    gemm(CUBLAS_OP_N, CUBLAS_OP_N, d_.hidden, m, d_.hidden, weight, x->data(), y->data());
    tanhInPlace(y->data(), m * d_.hidden, stream_);
    return P::withRows(meta, DeviceRows{m, y}, d_.hidden);
  }

  ValuePair backward(const ValuePair &meta, const ValuePtr &a, const ValuePtr &g, const ValuePtr &w,
                     sim::Rank::BackwardPart part) override {
    int64_t m = rowCount(meta.second), h = d_.hidden;
    bool wantWeight = part != sim::Rank::BackwardPart::Input, wantInput = part != sim::Rank::BackwardPart::Weight;
    Buffer scratch;
    const float *weight = wholeWeight(P::flat(w), scratch);
    Buffer x = rowsOf(P::rows(a), m), grad = rowsOf(P::rows(g), m);
    // dz = g * (1 - y^2), y = tanh(x W) recomputed.
    Buffer dz = buffer(m * h);
    gemm(CUBLAS_OP_N, CUBLAS_OP_N, h, m, h, weight, x->data(), dz->data());
    tanhInPlace(dz->data(), m * h, stream_);
    tanhBackward(dz->data(), grad->data(), m * h, stream_);
    ValuePair out = meta;
    if (wantWeight) { // dW = x^T dz (row-major), i.e. dW^T = dz^T x column-major
      Buffer dw = buffer(h * h);
      if (m > 0)
        gemm(CUBLAS_OP_N, CUBLAS_OP_T, h, h, m, dz->data(), x->data(), dw->data());
      else
        cudaMemsetAsync(dw->data(), 0, static_cast<size_t>(h * h) * 4, stream_);
      out.first = P::withFlat(meta.first, DeviceFlat{{DevicePiece{0, dw}}});
    }
    if (wantInput) { // dx = dz W^T
      Buffer dx = buffer(m * h);
      gemm(CUBLAS_OP_T, CUBLAS_OP_N, h, m, h, weight, dz->data(), dx->data());
      out.second = P::withRows(meta.second, DeviceRows{m, dx}, h);
    }
    return out;
  }

  ValuePtr loss(const ValuePtr &meta, const ValuePtr &a) override {
    int64_t m = rowCount(meta);
    Buffer y = rowsOf(P::rows(a), m), g = buffer(m * d_.hidden);
    lossGradient(g->data(), y->data(), d_, meta->batches->elements(), stream_);
    return P::withRows(meta, DeviceRows{m, g}, d_.hidden);
  }

  ValuePair update(const ValuePair &meta, const ValuePtr &g, const ValuePtr &w, const ValuePtr &o) override {
    const DeviceFlat *grad = P::flat(g), *weight = P::flat(w);
    const DeviceOpt *state = P::opt(o);
    DeviceFlat nw;
    auto ns = std::make_shared<DeviceOpt>();
    ns->moments.resize(static_cast<size_t>(o_.moments()));
    if (weight)
      for (const DevicePiece &p : weight->pieces) {
        int64_t count = p.count();
        Buffer values = copyOf(p.values->data(), count);
        Buffer gslice = rangeOf(grad, p.begin, count);
        std::vector<Buffer> moments;
        for (int k = 0; k < o_.moments(); ++k)
          moments.push_back(state && k < int(state->moments.size()) ? rangeOf(&state->moments[k], p.begin, count)
                                                                    : zeros(count));
        optimizerStep(o_, w->step, values->data(), moments[0]->data(), o_.moments() > 1 ? moments[1]->data() : nullptr,
                      gslice->data(), count, stream_);
        nw.pieces.push_back(DevicePiece{p.begin, values});
        for (int k = 0; k < o_.moments(); ++k)
          ns->moments[k].pieces.push_back(DevicePiece{p.begin, moments[k]});
      }
    int64_t stateElements = nw.elements() * o_.moments();
    return {P::withFlat(meta.first, std::move(nw)), attach<DeviceOpt>(meta.second, ns, stateElements)};
  }

  ValuePtr addGrad(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &b) override {
    DeviceFlat sum;
    if (const DeviceFlat *first = P::flat(a))
      for (const DevicePiece &p : first->pieces) {
        Buffer values = copyOf(p.values->data(), p.count());
        Buffer add = rangeOf(P::flat(b), p.begin, p.count());
        addInPlace(values->data(), add->data(), p.count(), stream_);
        sum.pieces.push_back(DevicePiece{p.begin, values});
      }
    return P::withFlat(meta, std::move(sum));
  }

  ValuePtr fakeGrad(const ValuePtr &meta) override {
    return P::withFlat(meta, DeviceFlat{{DevicePiece{0, zeros(weightElements())}}});
  }

  ValuePtr shardOf(const ValuePtr &meta, const ValuePtr &whole) override {
    if (meta->poisoned)
      return meta;
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    if (meta->kind == Kind::OptState) {
      const DeviceOpt *in = P::opt(whole);
      auto state = std::make_shared<DeviceOpt>();
      for (int k = 0; k < o_.moments(); ++k)
        state->moments.push_back(DeviceFlat{{DevicePiece{
            begin, rangeOf(in && k < int(in->moments.size()) ? &in->moments[k] : nullptr, begin, count)}}});
      return attach<DeviceOpt>(meta, state, count * o_.moments());
    }
    return P::withFlat(meta, DeviceFlat{{DevicePiece{begin, rangeOf(P::flat(whole), begin, count)}}});
  }

  ValuePtr collective(const ValuePtr &meta, sim::CollectiveKind kind, const ValuePtr &v,
                      const sim::IntSet &members) override {
    const DeviceFlat *in = P::flat(v);
    const std::vector<int64_t> &group = members.elements();
    if (kind == sim::CollectiveKind::AllGather)
      return P::withFlat(meta, allGather(in, group));
    if (kind == sim::CollectiveKind::AllReduce) { // on the gradient's pieces, packed in order
      DeviceFlat data = in ? *in : DeviceFlat{};
      int64_t n = data.elements();
      Buffer packed = buffer(n);
      int64_t at = 0;
      for (const DevicePiece &p : data.pieces) {
        copy(packed->data() + at, p.values->data(), p.count());
        at += p.count();
      }
      nccl_.allReduce(packed->data(), n, group);
      if (data.pieces.size() == 1) {
        data.pieces[0].values = packed;
      } else {
        at = 0;
        for (DevicePiece &p : data.pieces) {
          p.values = copyOf(packed->data() + at, p.count());
          at += p.count();
        }
      }
      return P::withFlat(meta, std::move(data));
    }
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    Buffer whole = rangeOf(in, 0, weightElements());
    Buffer part = buffer(count);
    nccl_.reduceScatter(whole->data(), part->data(), weightElements(), group);
    return P::withFlat(meta, DeviceFlat{{DevicePiece{begin, part}}});
  }

  void settle() override { checkCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  std::string stats() override {
    // The step: from this rank's first operation to its last, on the device.
    cudaEvent_t stepEnd;
    checkCuda(cudaEventCreate(&stepEnd), "cudaEventCreate");
    checkCuda(cudaEventRecord(stepEnd, stream_), "cudaEventRecord");
    checkCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    float stepMs = 0;
    cudaEventElapsedTime(&stepMs, stepStart_, stepEnd);
    cudaEventDestroy(stepEnd);
    double step = stepMs / 1e3;
    double reference = referenceRate(d_.hidden);
    char line[400];
    std::snprintf(line, sizeof line,
                  "schedc: stats: rank %d: gemm %.3f GFLOP in a step of %.4f s = %.1f GFLOP/s achieved; cublas "
                  "%lldx%lld alone %.1f GFLOP/s (step %.0f%% of it); device peak %.1f MiB; MPI %.4f s\n",
                  comm_.rank(), gemmFlops_ / 1e9, step, step > 0 ? gemmFlops_ / step / 1e9 : 0.0,
                  static_cast<long long>(d_.hidden), static_cast<long long>(d_.hidden), reference,
                  step > 0 && reference > 0 ? 100 * gemmFlops_ / step / 1e9 / reference : 0.0,
                  static_cast<double>(memory_.peakBytes()) / (1 << 20), comm_.mpiSeconds());
    return line;
  }

protected:
  // Point-to-point messages and the final weights go through the host (see the header).
  cpu::HostData toHost(const ValuePtr &v) override {
    auto hostFlat = [&](const DeviceFlat &f) {
      cpu::Flat out;
      for (const DevicePiece &p : f.pieces)
        out.pieces.push_back(cpu::Piece{p.begin, download(p.values->data(), p.count())});
      return out;
    };
    cpu::HostData d;
    if (const DeviceRows *r = P::rows(v)) {
      d.rows = cpu::Rows{r->rows, download(r->values->data(), r->rows * d_.hidden)};
    } else if (const DeviceFlat *f = P::flat(v)) {
      d.flat = hostFlat(*f);
    } else if (const DeviceOpt *o = P::opt(v)) {
      d.opt.emplace();
      for (const DeviceFlat &m : o->moments)
        d.opt->moments.push_back(hostFlat(m));
    }
    return d;
  }

  ValuePtr fromHost(const ValuePtr &meta, cpu::HostData data) override {
    auto deviceFlat = [&](const cpu::Flat &f) {
      DeviceFlat out;
      for (const cpu::Piece &p : f.pieces)
        out.pieces.push_back(DevicePiece{p.begin, upload(p.values)});
      return out;
    };
    if (data.rows)
      return P::withRows(meta, DeviceRows{data.rows->rows, upload(data.rows->values)}, d_.hidden);
    if (data.flat)
      return P::withFlat(meta, deviceFlat(*data.flat));
    if (data.opt) {
      auto s = std::make_shared<DeviceOpt>();
      int64_t n = 0;
      for (const cpu::Flat &m : data.opt->moments) {
        s->moments.push_back(deviceFlat(m));
        n += m.elements();
      }
      return attach<DeviceOpt>(meta, s, n);
    }
    return meta;
  }

private:
  int64_t rowCount(const ValuePtr &meta) const { return static_cast<int64_t>(meta->batches->size()) * d_.tokens; }

  void checkCuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess)
      memory_.fail(std::string(what) + ": " + cudaGetErrorString(e));
  }
  void checkBlas(cublasStatus_t s, const char *what) {
    if (s != CUBLAS_STATUS_SUCCESS)
      // diag-coverage: unreachable (cuBLAS fails only on a broken GPU or driver, not for any schedule or option)
      memory_.fail(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
  }

  Buffer buffer(int64_t count) { return std::make_shared<DeviceBuffer>(memory_, count); }
  Buffer zeros(int64_t count) {
    Buffer b = buffer(count);
    if (count > 0)
      checkCuda(cudaMemsetAsync(b->data(), 0, static_cast<size_t>(count) * 4, stream_), "cudaMemsetAsync");
    return b;
  }
  void copy(float *to, const float *from, int64_t count) {
    if (count > 0)
      checkCuda(cudaMemcpyAsync(to, from, static_cast<size_t>(count) * 4, cudaMemcpyDeviceToDevice, stream_),
                "cudaMemcpyAsync");
  }
  Buffer copyOf(const float *from, int64_t count) {
    Buffer b = buffer(count);
    copy(b->data(), from, count);
    return b;
  }
  std::vector<float> download(const float *from, int64_t count) {
    std::vector<float> out(static_cast<size_t>(count));
    if (count > 0) {
      checkCuda(cudaMemcpyAsync(out.data(), from, static_cast<size_t>(count) * 4, cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync");
      checkCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }
    return out;
  }
  Buffer upload(const std::vector<float> &values) {
    Buffer b = buffer(static_cast<int64_t>(values.size()));
    if (!values.empty()) {
      checkCuda(cudaMemcpyAsync(b->data(), values.data(), values.size() * 4, cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync");
      checkCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); // `values` goes out of scope
    }
    return b;
  }
  // Elements [begin, begin + count) of `f` as a buffer: the piece itself when one piece is
  // exactly that range, else assembled over zeros.
  Buffer rangeOf(const DeviceFlat *f, int64_t begin, int64_t count) {
    if (f)
      for (const DevicePiece &p : f->pieces)
        if (p.begin == begin && p.count() == count)
          return p.values;
    Buffer out = zeros(count);
    if (f)
      for (const DevicePiece &p : f->pieces) {
        int64_t lo = std::max(begin, p.begin), hi = std::min(begin + count, p.begin + p.count());
        if (lo < hi)
          copy(out->data() + (lo - begin), p.values->data() + (lo - p.begin), hi - lo);
      }
    return out;
  }
  const float *wholeWeight(const DeviceFlat *w, Buffer &scratch) {
    scratch = rangeOf(w, 0, weightElements());
    return scratch->data();
  }
  Buffer rowsOf(const DeviceRows *r, int64_t expectedRows) {
    if (r && r->rows == expectedRows)
      return r->values;
    return zeros(expectedRows * d_.hidden);
  }

  // Every member's pieces, put together: sorted by position, one contiguous piece when
  // they make the whole array.
  DeviceFlat allGather(const DeviceFlat *in, const std::vector<int64_t> &group) {
    std::vector<int64_t> header;
    int64_t mine = 0;
    if (in)
      for (const DevicePiece &p : in->pieces) {
        header.push_back(p.begin);
        header.push_back(p.count());
        mine += p.count();
      }
    std::vector<std::vector<int64_t>> headers = comm_.allgatherInts(header, group);
    std::vector<int64_t> counts;
    int64_t total = 0;
    for (const std::vector<int64_t> &h : headers) {
      int64_t c = 0;
      for (size_t i = 1; i < h.size(); i += 2)
        c += h[i];
      counts.push_back(c);
      total += c;
    }
    Buffer packed = buffer(mine), out = buffer(total);
    int64_t at = 0;
    if (in)
      for (const DevicePiece &p : in->pieces) {
        copy(packed->data() + at, p.values->data(), p.count());
        at += p.count();
      }
    nccl_.gather(packed ? packed->data() : nullptr, out->data(), counts, group);
    // Where each received piece lies in `out`, sorted by its place in the weight.
    std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> places; // begin -> (offset, count)
    at = 0;
    for (const std::vector<int64_t> &h : headers)
      for (size_t i = 0; i + 1 < h.size(); i += 2) {
        places.push_back({h[i], {at, h[i + 1]}});
        at += h[i + 1];
      }
    std::sort(places.begin(), places.end());
    DeviceFlat gathered;
    if (total == weightElements()) { // whole: one contiguous piece, ready for GEMMs
      Buffer whole = buffer(total);
      for (auto &[begin, where] : places)
        copy(whole->data() + begin, out->data() + where.first, where.second);
      gathered.pieces.push_back(DevicePiece{0, whole});
    } else {
      for (auto &[begin, where] : places)
        gathered.pieces.push_back(DevicePiece{begin, copyOf(out->data() + where.first, where.second)});
    }
    return gathered;
  }

  // C (m x n) = op(A) op(B), column-major (the row-major tensors seen transposed); its FLOPs
  // count for --stats (timed over the whole step, not per call: no event per GEMM).
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
            float *c) {
    if (m == 0 || n == 0)
      return;
    const float one = 1.0f, zero = 0.0f;
    int lda = static_cast<int>(d_.hidden), ldb = static_cast<int>(d_.hidden), ldc = static_cast<int>(d_.hidden);
    checkBlas(cublasSgemm(blas_, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &one, a, lda, b,
                          ldb, &zero, c, ldc),
              "cublasSgemm");
    gemmFlops_ += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }

  // cuBLAS's own rate on n x n x n in this run, in GFLOP/s.
  double referenceRate(int64_t n) {
    Buffer a = zeros(n * n), b = zeros(n * n), c = zeros(n * n);
    const float one = 1.0f, zero = 0.0f;
    int in = static_cast<int>(n);
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    checkBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, a->data(), in, b->data(), in, &zero,
                          c->data(), in),
              "cublasSgemm"); // warm-up
    const int repeats = 5;
    cudaEventRecord(start, stream_);
    for (int r = 0; r < repeats; ++r)
      checkBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, a->data(), in, b->data(), in, &zero,
                            c->data(), in),
                "cublasSgemm");
    cudaEventRecord(end, stream_);
    checkCuda(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, end);
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    return ms > 0 ? repeats * 2.0 * double(n) * double(n) * double(n) / (ms / 1e3) / 1e9 : 0.0;
  }

  cpu::Optimizer o_;
  cudaStream_t stream_;
  DeviceMemory memory_;
  NcclGroups nccl_;
  cublasHandle_t blas_ = nullptr;
  cudaEvent_t stepStart_ = nullptr;
  double gemmFlops_ = 0;
};

// This process's rank among those on its node.
int localRank() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

} // namespace

std::string deviceProblem() {
  int local = localRank();
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
    return "the cuda backend found no usable GPU: no NVIDIA driver or GPU on this machine";
  if (e != cudaSuccess)
    return std::string("the cuda backend found no usable GPU: ") + cudaGetErrorString(e);
  if (devices == 0)
    return "the cuda backend found no GPU";
  if (local >= devices)
    return "the cuda backend runs one process per GPU, but this node has " + std::to_string(devices) + " GPU" +
           (devices == 1 ? "" : "s") + " and more processes; start at most " + std::to_string(devices) + " per node";
  return "";
}

std::unique_ptr<backend::ComputeRank> makeCudaRank(const cpu::Dims &dims, const cpu::Optimizer &optimizer, bool tf32,
                                                   cpu::Comm &comm) {
  int local = localRank();
  cudaError_t e = cudaSetDevice(local);
  cudaStream_t stream = nullptr;
  if (e == cudaSuccess)
    e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess)
    comm.abort(std::string("cuda backend: cannot use GPU ") + std::to_string(local) + ": " + cudaGetErrorString(e));
  return std::make_unique<CudaRank>(dims, optimizer, tf32, comm, stream);
}

} // namespace schedc::cuda
