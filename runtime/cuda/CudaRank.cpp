// CudaRank implementation. Device data (DeviceData.h) mirrors the cpu backend's. Values are
// immutable once made (one payload may sit in several storage slots), so every operation
// writes new buffers. Missing
// data (a wrong schedule forced with --no-verify) reads as zeros.
//
// Precision: fp32 keeps everything in fp32 (GEMMs cublasSgemm, TF32 tensor cores with
// --tf32). bf16 mixed precision keeps weights (what the GEMMs read), weight gradients
// (unless --grad-precision=fp32), activations and their gradients in bf16, and optimizer
// states in fp32 with the fp32 master weights of their slice (what the optimizer updates;
// sharded with the state, as in ZeRO); GEMMs are cublasGemmEx on bf16 operands
// accumulating in fp32 — the rounding points of the cpu backend's emulation.
//
// Streams: GEMMs and kernels run on the compute stream in the schedule's order, collectives
// (with their packing copies) on a stream of their own, sends and receives on their
// channels' streams (PointToPoint); StreamOrder orders them, so a collective or a message
// overlaps the compute that does not need it. Every operation names the values it reads
// (reads/enter) before it enqueues work.
//
// A mixture-of-experts layer is the cpu backend's (backend/Experts.h): its router's copies,
// masks and all-to-alls are DeviceExperts'.
#include "cuda/CudaRank.h"

#include "cuda/DeviceCopies.h"
#include "cuda/DeviceData.h"
#include "cuda/DeviceExperts.h"
#include "cuda/DeviceMemory.h"
#include "cuda/GatherPieces.h"
#include "cuda/Gemms.h"
#include "cuda/Kernels.h"
#include "cuda/Nccl.h"
#include "cuda/PointToPoint.h"

#include <algorithm>
#include <cuda_runtime.h>

namespace schedc::cuda {

namespace {

using sim::Kind;
using sim::ValuePtr;
using ValuePair = std::pair<ValuePtr, ValuePtr>;

using P = DevicePayloads;

class CudaRank final : public backend::ComputeRank {
public:
  // Collective (the point-to-point channels are opened here): every rank makes its own.
  CudaRank(const backend::ComputeConfig &config, backend::Comm &comm, cudaStream_t compute, cudaStream_t collectives)
      : ComputeRank(config, comm), compute_(compute), collectives_(collectives), current_(compute),
        low_(bf16() ? DType::BF16 : DType::F32), gradType_(bf16Gradients() ? DType::BF16 : DType::F32),
        memory_([this](const std::string &what) { comm_.abort("cuda backend: " + what); }, compute, collectives),
        nccl_(comm, memory_, config.groups), messages_(comm, memory_, config.routes) {
    gemms_.emplace(memory_, compute_, config.tf32);
    precisionName_ = bf16() ? "bf16" : config.tf32 ? "tf32" : "fp32";
    for (cudaEvent_t *e : {&origin_, &stepStart_, &stepEnd_})
      memory_.check(cudaEventCreate(e), "cudaEventCreate");
    gemms_->warmUp(d_.hidden, d_.tokens, low_, gradType_);
  }
  ~CudaRank() override {
    cudaDeviceSynchronize();
    for (cudaEvent_t e : {origin_, stepStart_, stepEnd_})
      cudaEventDestroy(e);
    gemms_.reset(); // its workspace freed on the compute stream; every other buffer went with the run's values
    if (collectives_ != compute_)
      cudaStreamDestroy(collectives_);
    cudaStreamDestroy(compute_);
  }

  ValuePtr loadWeight(const ValuePtr &meta) override {
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    return withData(
        meta, DeviceFlat{{DevicePiece{begin, copies_.converted(initialMaster(meta->layer, begin, count), low_)}}});
  }

  ValuePtr loadOptState(const ValuePtr &meta) override {
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    DeviceOpt state;
    for (int k = 0; k < o_.moments(); ++k)
      state.moments.push_back(DeviceFlat{{DevicePiece{begin, copies_.zeros(count, DType::F32)}}});
    if (bf16()) // the fp32 master of the weight loadWeight rounds
      state.master.pieces.push_back(DevicePiece{begin, initialMaster(meta->layer, begin, count)});
    return withData(meta, std::move(state));
  }

  ValuePtr input(const ValuePtr &meta) override {
    const std::vector<int64_t> &batches = meta->batches->elements();
    int64_t block = d_.tokens * d_.hidden;
    Buffer b = copies_.buffer(block * static_cast<int64_t>(batches.size()), low_);
    for (size_t k = 0; k < batches.size(); ++k)
      inputRows(b->at(static_cast<int64_t>(k) * block), low_, d_, batches[k], current_);
    return withData(meta, DeviceRows{d_.tokens * static_cast<int64_t>(batches.size()), b});
  }

  // The layer y = tanh(x W1) W2 over the units the weight holds (cpu/Kernels.h; the whole
  // layer, or a tensor-parallel part whose y is a partial sum). cuBLAS is column-major: a
  // row-major r x c matrix with leading dimension ld is its c x r transpose, and the
  // units' W1 columns and W2 rows are u x H row-major blocks with leading dimension 2H. A
  // mixture-of-experts layer's router copies each row (DeviceExperts); its experts, or its
  // whole layer, mask each row's h to its experts' units.
  ValuePtr forward(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &w) override {
    reads({a, w});
    int64_t m = rowCount(a), h = d_.hidden;
    Buffer x = rowsOf(P::rows(a), m);
    if (w->split == sim::Split::Dense)
      return withData(meta, DeviceRows{m * d_.topK, experts_.copiesOf(x, m, d_.topK)});
    auto [weight, units] = layerWeights(w);
    Buffer inner = innerActivations(weight, units, x, m, experts_.maskOf(unitMask(w, a, m))); // h, fp32
    Buffer operand = copies_.converted(inner, low_); // a GEMM operand: stored low
    Buffer y = copies_.zeros(m * h, low_);           // h W2, accumulated in fp32
    gemms_->gemm(CUBLAS_OP_N, CUBLAS_OP_N, h, m, units, weight, h, 2 * h, operand, 0, units, y, 0, h);
    return withData(meta, DeviceRows{m, y});
  }

  ValuePair backward(const ValuePair &meta, const ValuePtr &a, const ValuePtr &g, const ValuePtr &w,
                     sim::Rank::BackwardPart part) override {
    reads({a, g, w});
    int64_t m = rowCount(a), h = d_.hidden;
    bool wantWeight = part != sim::Rank::BackwardPart::Input, wantInput = part != sim::Rank::BackwardPart::Weight;
    if (w->split == sim::Split::Dense) // the router: its copies' gradients summed; no weights
      return {wantWeight ? emptyOf(meta.first) : meta.first,
              wantInput ? withData(meta.second,
                                   DeviceRows{m, experts_.sumOfCopies(rowsOf(P::rows(g), m * d_.topK), m, d_.topK)})
                        : meta.second};
    auto [weight, units] = layerWeights(w);
    Buffer x = rowsOf(P::rows(a), m), grad = rowsOf(P::rows(g), m);
    // h = tanh(x W1) recomputed in fp32 (masked to each row's experts); dz = (g W2ᵀ)(1 - h²)
    // (masked again: a masked unit's h is 0); both GEMM operands, so low.
    Buffer mask = experts_.maskOf(unitMask(w, a, m));
    Buffer inner = innerActivations(weight, units, x, m, mask);
    Buffer innerOperand = low_ == DType::F32 ? copies_.copyOf(inner) : copies_.converted(inner, low_);
    Buffer z = copies_.buffer(m * units, DType::F32);
    gemms_->gemm(CUBLAS_OP_T, CUBLAS_OP_N, units, m, h, weight, h, 2 * h, grad, 0, h, z, 0, units);
    tanhBackward(inner->f32(), z->raw(), DType::F32, m * units, current_);
    if (mask)
      multiplyBy(inner->f32(), mask->f32(), m * units, current_);
    Buffer dz = copies_.converted(inner, low_);
    ValuePair out = meta;
    if (wantWeight) { // dW1 = xᵀ dz and dW2 = hᵀ g, into each unit's two halves
      Buffer dw = copies_.zeros(units * 2 * h, gradType_);
      gemms_->gemm(CUBLAS_OP_N, CUBLAS_OP_T, h, units, m, x, 0, h, dz, 0, units, dw, 0, 2 * h);
      gemms_->gemm(CUBLAS_OP_N, CUBLAS_OP_T, h, units, m, grad, 0, h, innerOperand, 0, units, dw, h, 2 * h);
      out.first = withData(meta.first, DeviceFlat{{DevicePiece{unitRange(w).first, dw}}});
    }
    if (wantInput) { // dx = dz W1ᵀ
      Buffer dx = copies_.zeros(m * h, low_);
      gemms_->gemm(CUBLAS_OP_N, CUBLAS_OP_N, h, m, units, weight, 0, 2 * h, dz, 0, units, dx, 0, h);
      out.second = withData(meta.second, DeviceRows{m, dx});
    }
    return out;
  }

  ValuePtr loss(const ValuePtr &meta, const ValuePtr &a) override {
    reads({a});
    int64_t m = rowCount(meta);
    Buffer y = rowsOf(P::rows(a), m), g = copies_.buffer(m * d_.hidden, low_);
    lossGradient(g->raw(), y->raw(), low_, d_, meta->batches->elements(), current_);
    return withData(meta, DeviceRows{m, g});
  }

  ValuePair update(const ValuePair &meta, const ValuePtr &g, const ValuePtr &w, const ValuePtr &o) override {
    reads({g, w, o});
    const DeviceFlat *grad = P::flat(g), *weight = P::flat(w);
    const DeviceOpt *state = P::opt(o);
    DeviceFlat nw;
    DeviceOpt ns;
    ns.moments.resize(static_cast<size_t>(o_.moments()));
    if (weight)
      for (const DevicePiece &p : weight->pieces) {
        int64_t count = p.count();
        // The optimizer steps the fp32 master (at bf16 the state's; at fp32 the weight
        // itself); the new weight is its bf16 rounding.
        bool master = bf16() && state && covers(state->master, p.begin, count);
        Buffer values = master ? copies_.copyOf(copies_.rangeOf(&state->master, p.begin, count, DType::F32))
                               : copies_.copyOf(copies_.converted(p.values, DType::F32));
        Buffer gslice = copies_.rangeOf(grad, p.begin, count, gradType_);
        std::vector<Buffer> moments;
        for (int k = 0; k < o_.moments(); ++k)
          moments.push_back(copies_.copyOf(state && k < int(state->moments.size())
                                               ? copies_.rangeOf(&state->moments[k], p.begin, count, DType::F32)
                                               : copies_.zeros(count, DType::F32)));
        optimizerStep(o_, w->step, values->f32(), moments[0]->f32(), o_.moments() > 1 ? moments[1]->f32() : nullptr,
                      gslice->raw(), gradType_, count, current_);
        nw.pieces.push_back(DevicePiece{p.begin, copies_.converted(values, low_)});
        if (bf16())
          ns.master.pieces.push_back(DevicePiece{p.begin, values});
        for (int k = 0; k < o_.moments(); ++k)
          ns.moments[k].pieces.push_back(DevicePiece{p.begin, moments[k]});
      }
    return {withData(meta.first, std::move(nw)), withData(meta.second, std::move(ns))};
  }

  ValuePtr addGrad(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &b) override {
    reads({a, b});
    DeviceFlat sum;
    if (const DeviceFlat *first = P::flat(a))
      for (const DevicePiece &p : first->pieces) {
        Buffer add = copies_.rangeOf(P::flat(b), p.begin, p.count(), p.values->type());
        Buffer values = copies_.buffer(p.count(), p.values->type());
        addInto(values->raw(), p.values->raw(), add->raw(), p.values->type(), p.count(), current_);
        sum.pieces.push_back(DevicePiece{p.begin, values});
      }
    return withData(meta, std::move(sum));
  }

  ValuePtr fakeGrad(const ValuePtr &meta) override {
    auto [begin, count] = heldRange(meta);
    return withData(meta, DeviceFlat{{DevicePiece{begin, copies_.zeros(count, gradType_)}}});
  }

  ValuePtr emptyOf(const ValuePtr &meta) override {
    if (meta->kind != Kind::OptState)
      return withData(meta, DeviceFlat{});
    DeviceOpt state;
    state.moments.resize(static_cast<size_t>(o_.moments()));
    return withData(meta, std::move(state));
  }

  ValuePtr transfer(const ValuePtr &meta, const ValuePtr &) override {
    comm_.abort("the cuda backend does not copy values between memory tiers yet (`offload`, `prefetch`: a "
                "value in host memory would need its own pinned buffer); check the schedule with schedc check");
    return meta;
  }
  ValuePtr shardOf(const ValuePtr &meta, const ValuePtr &whole) override {
    if (meta->poisoned)
      return meta;
    reads({whole});
    if (meta->split == sim::Split::Sequence) { // this shard's rows of each micro-batch
      int64_t batches = static_cast<int64_t>(meta->batches->size()), chunk = sequenceRows(meta->total);
      Buffer all = rowsOf(P::rows(whole), batches * d_.tokens),
             mine = copies_.buffer(batches * chunk * d_.hidden, low_);
      for (int64_t b = 0; b < batches; ++b)
        copies_.copy(mine->at(b * chunk * d_.hidden), all, chunk * d_.hidden,
                     (b * d_.tokens + meta->shards->min() * chunk) * d_.hidden);
      return withData(meta, DeviceRows{batches * chunk, mine});
    }
    auto [begin, count] = shard(meta->shards->min(), meta->total);
    if (meta->kind == Kind::OptState) {
      const DeviceOpt *in = P::opt(whole);
      DeviceOpt state;
      for (int k = 0; k < o_.moments(); ++k)
        state.moments.push_back(DeviceFlat{
            {DevicePiece{begin, copies_.rangeOf(in && k < int(in->moments.size()) ? &in->moments[k] : nullptr, begin,
                                                count, DType::F32)}}});
      if (bf16())
        state.master.pieces.push_back(
            DevicePiece{begin, copies_.rangeOf(in ? &in->master : nullptr, begin, count, DType::F32)});
      return withData(meta, std::move(state));
    }
    return withData(
        meta, DeviceFlat{{DevicePiece{begin, copies_.rangeOf(P::flat(whole), begin, count, typeOf(meta->kind))}}});
  }

  // On the collectives stream: it waits for the compute that made `v`, and compute waits
  // for the result only where it uses it.
  ValuePtr collective(const ValuePtr &meta, CollectiveKind kind, const ValuePtr &v,
                      const sim::IntSet &members) override {
    current_ = collectives_;
    reads({v});
    ValuePtr out = collectiveHere(meta, kind, v, members);
    memory_.order().leave(current_, usesOf({v, out}));
    current_ = compute_;
    return out;
  }

  void send(int64_t to, int64_t tag, const ValuePtr &v) override {
    std::vector<int64_t> description;
    std::vector<Buffer> buffers;
    describe(v, description, buffers);
    messages_.send(to, tag, description, buffers);
  }

  ValuePtr recv(const ValuePtr &meta, int64_t from, int64_t tag) override {
    PointToPoint::Message m = messages_.recv(from, tag);
    return rebuild(meta, m.description, m.buffers);
  }

  void finish() override {
    messages_.finish();
    settle();
  }

  // Waits for the compute and collectives streams (not for sends: see StreamOrder).
  void settle() override {
    memory_.check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
    memory_.check(cudaStreamSynchronize(collectives_), "cudaStreamSynchronize");
  }

  // The device's clock starts once the work before the barrier (the warm-up) has finished.
  void clockStarts() override {
    memory_.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    memory_.check(cudaEventRecord(origin_, compute_), "cudaEventRecord");
    clockStarted_ = true;
  }
  // The step begins when the compute stream reaches the first event's work (what came
  // before, such as the weights' loading, done).
  void beforeFirstEvent() override {
    memory_.check(cudaEventRecord(stepStart_, compute_), "cudaEventRecord");
    stepStarted_ = true;
  }
  // Measured once, when the step's last work is enqueued: every stream joined into the
  // compute stream, then waited for.
  std::optional<std::pair<double, double>> deviceSpan() override {
    if (!clockStarted_)
      return std::nullopt;
    if (!span_) {
      span_.emplace(1e300, 0.0); // no event on this rank: no span
      memory_.streams().wait(compute_, memory_.streams().record(collectives_));
      messages_.joinInto(compute_);
      memory_.check(cudaEventRecord(stepEnd_, compute_), "cudaEventRecord");
      memory_.check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
      float startMs = 0, endMs = 0;
      if (stepStarted_ && cudaEventElapsedTime(&startMs, origin_, stepStart_) == cudaSuccess &&
          cudaEventElapsedTime(&endMs, origin_, stepEnd_) == cudaSuccess)
        span_.emplace(startMs / 1e3, endMs / 1e3);
    }
    return span_;
  }

  std::string stats() override {
    // The step: from this rank's first event to the end of its last work, on any stream.
    std::optional<std::pair<double, double>> span = deviceSpan();
    double step = span && span->second > span->first ? span->second - span->first : 0.0;
    double reference = gemms_->referenceRate(d_.hidden, low_);
    char line[400];
    std::snprintf(line, sizeof line,
                  "schedc: stats: rank %d: gemm %.3f GFLOP in a step of %.4f s = %.1f GFLOP/s achieved; cublas %s "
                  "%lldx%lld alone %.1f GFLOP/s (step %.0f%% of it); device peak %.1f MiB; MPI %.4f s\n",
                  comm_.rank(), gemms_->flops() / 1e9, step, step > 0 ? gemms_->flops() / step / 1e9 : 0.0,
                  precisionName_, static_cast<long long>(d_.hidden), static_cast<long long>(d_.hidden), reference,
                  step > 0 && reference > 0 ? 100 * gemms_->flops() / step / 1e9 / reference : 0.0,
                  static_cast<double>(memory_.peakBytes()) / (1 << 20), comm_.mpiSeconds());
    return line;
  }

protected:
  // The final weights go through the host as fp32.
  backend::HostData toHost(const ValuePtr &v) override {
    reads({v});
    auto hostFlat = [&](const DeviceFlat &f) {
      backend::Flat out;
      for (const DevicePiece &p : f.pieces)
        out.pieces.push_back(backend::Piece{p.begin, copies_.download(p.values, p.count())});
      return out;
    };
    backend::HostData d;
    if (const DeviceRows *r = P::rows(v)) {
      d.rows = backend::Rows{r->rows, copies_.download(r->values, r->rows * d_.hidden)};
    } else if (const DeviceFlat *f = P::flat(v)) {
      d.flat = hostFlat(*f);
    } else if (const DeviceOpt *o = P::opt(v)) {
      d.opt.emplace();
      for (const DeviceFlat &m : o->moments)
        d.opt->moments.push_back(hostFlat(m));
      d.opt->master = hostFlat(o->master);
    }
    return d;
  }

private:
  // How a value of `kind` keeps its elements: optimizer states (moments, masters) as fp32,
  // weight gradients as gradType_, the rest as low_.
  DType typeOf(Kind kind) const {
    return kind == Kind::OptState ? DType::F32 : kind == Kind::WeightGrad ? gradType_ : low_;
  }

  // Elements [begin, begin + count) of layer `layer`'s initial weight, fp32.
  Buffer initialMaster(int64_t layer, int64_t begin, int64_t count) {
    Buffer b = copies_.buffer(count, DType::F32);
    initialWeight(b->f32(), d_, layer, begin, count, current_);
    return b;
  }
  // Before the operation enqueues work on current_ that reads `operands` (StreamOrder).
  void reads(std::initializer_list<ValuePtr> operands) { memory_.order().enter(current_, usesOf(operands)); }

  // The units of weight `w` the GEMMs read (a whole layer's, or a tensor-parallel part's;
  // fp32, or bf16 at bf16), and how many.
  std::pair<Buffer, int64_t> layerWeights(const ValuePtr &w) {
    auto [begin, count] = unitRange(w);
    return {copies_.rangeOf(P::flat(w), begin, count, low_), count / backend::unitElements(d_.hidden)};
  }
  Buffer rowsOf(const DeviceRows *r, int64_t expectedRows) {
    if (r && r->rows == expectedRows && r->values && r->values->type() == low_)
      return r->values;
    return copies_.zeros(expectedRows * d_.hidden, low_);
  }

  // The collective, its work enqueued on current_ (the collectives stream).
  ValuePtr collectiveHere(const ValuePtr &meta, CollectiveKind kind, const ValuePtr &v, const sim::IntSet &members) {
    const std::vector<int64_t> &group = members.elements();
    if (meta->kind == Kind::Activation || meta->kind == Kind::ActGrad)
      return activationCollective(meta, kind, v, group);
    const DeviceFlat *in = P::flat(v);
    DType type = typeOf(meta->kind);
    switch (kind) {
    case CollectiveKind::AllGather:
      return withData(meta, gatherPieces(in, group, type, copies_, nccl_, comm_, current_));
    case CollectiveKind::AllReduce: return withData(meta, allReduce(in, group, type));
    case CollectiveKind::ReduceScatter: return reduceScatter(meta, v, group, type);
    case CollectiveKind::AllToAll: break; // of tokens only (sim::takes): activationCollective
    }
    SCHEDC_UNREACHABLE("a collective the cuda backend does not compute");
  }

  // An all-reduce on the pieces, packed in order.
  DeviceFlat allReduce(const DeviceFlat *in, const std::vector<int64_t> &group, DType type) {
    DeviceFlat data = in ? *in : DeviceFlat{};
    int64_t n = data.elements();
    Buffer packed = copies_.buffer(n, type);
    int64_t at = 0;
    for (const DevicePiece &p : data.pieces) {
      copies_.copy(packed->at(at), copies_.converted(p.values, type), p.count());
      at += p.count();
    }
    nccl_.allReduce(packed->raw(), type, n, group, current_);
    at = 0;
    for (DevicePiece &p : data.pieces) {
      p.values = data.pieces.size() == 1 ? packed : copies_.copyOf(packed, at, p.count());
      at += p.count();
    }
    return data;
  }

  // A reduce-scatter of the operand's slice (the whole gradient, or a tensor-parallel part's):
  // summed, this member keeps its share.
  ValuePtr reduceScatter(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group, DType type) {
    const DeviceFlat *in = P::flat(v);
    auto [from, size] = heldRange(v);
    auto [begin, count] = heldRange(meta);
    Buffer operand = copies_.rangeOf(in, from, size, type);
    Buffer part = copies_.buffer(count, type);
    nccl_.reduceScatter(operand->raw(), part->raw(), type, size, group, current_);
    return withData(meta, DeviceFlat{{DevicePiece{begin, part}}});
  }

  // All-reduce and reduce-scatter of partial sums, all-gather of sequence shards (the
  // layouts of backend/Tensors.h), on current_.
  ValuePtr activationCollective(const ValuePtr &meta, CollectiveKind kind, const ValuePtr &v,
                                const std::vector<int64_t> &group) {
    switch (kind) {
    case CollectiveKind::AllReduce: return allReducePartialSums(meta, v, group);
    case CollectiveKind::ReduceScatter: return reduceScatterPartialSums(meta, v, group);
    case CollectiveKind::AllGather: return gatherSequenceShards(meta, v, group);
    case CollectiveKind::AllToAll: return exchangeTokens(meta, v, group);
    }
    SCHEDC_UNREACHABLE("a collective of activations the cuda backend does not compute");
  }

  // Tokens out to the experts or back (backend::dispatchRows, combineRows): the layer's output
  // sums a token's copies; the experts' input gradient stays as copies.
  ValuePtr exchangeTokens(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
    const auto n = static_cast<int64_t>(group.size());
    const backend::Routing r = routing(meta->layer, n);
    Buffer in = rowsOf(P::rows(v), rowCount(v));
    if (sim::atExperts(meta->split)) { // each member's micro-batches' copies routed here come
      const auto batches = static_cast<int64_t>(v->batches->size());
      Buffer out = experts_.dispatch(in, backend::dispatchRows(r, n, batches, v->split == sim::Split::Routed),
                                     rowsOfMembers(group, batches, r.copiesPerSlice(n)), group);
      return withData(meta, DeviceRows{out->count() / d_.hidden, out});
    }
    const auto batches = static_cast<int64_t>(meta->batches->size()), rows = batches * d_.tokens;
    Buffer copies = experts_.combine(in, rowsOfMembers(group, batches, r.copiesPerSlice(n)),
                                     backend::combineRows(r, n, batches), rows * r.topK, group);
    if (meta->kind != Kind::Activation)
      return withData(meta, DeviceRows{rows * r.topK, copies});
    return withData(meta, DeviceRows{rows, experts_.sumOfCopies(copies, rows, r.topK)});
  }

  ValuePtr allReducePartialSums(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
    int64_t rows = static_cast<int64_t>(meta->batches->size()) * d_.tokens;
    Buffer sum = copies_.copyOf(rowsOf(P::rows(v), rows));
    nccl_.allReduce(sum->raw(), low_, rows * d_.hidden, group, current_);
    return withData(meta, DeviceRows{rows, sum});
  }

  // Partial sums, completed as sequence shards.
  ValuePtr reduceScatterPartialSums(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
    int64_t batches = static_cast<int64_t>(meta->batches->size()), rows = batches * d_.tokens, h = d_.hidden;
    int64_t chunk = sequenceRows(meta->total), block = chunk * h;
    Buffer in = rowsOf(P::rows(v), rows), byShard = copies_.buffer(rows * h, low_),
           mine = copies_.buffer(batches * block, low_);
    for (int64_t s = 0; s < meta->total; ++s) // shard s's rows of every micro-batch, then shard s + 1's
      for (int64_t b = 0; b < batches; ++b)
        copies_.copy(byShard->at((s * batches + b) * block), in, block, (b * d_.tokens + s * chunk) * h);
    nccl_.reduceScatter(byShard->raw(), mine->raw(), low_, rows * h, group, current_);
    return withData(meta, DeviceRows{batches * chunk, mine});
  }

  // An all-gather of sequence shards: each member's shard, placed by the shard index it says
  // it holds.
  ValuePtr gatherSequenceShards(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
    int64_t batches = static_cast<int64_t>(meta->batches->size()), rows = batches * d_.tokens, h = d_.hidden;
    int64_t chunk = sequenceRows(v->total), block = chunk * h, each = batches * block;
    std::vector<std::vector<int64_t>> shards = comm_.allgatherInts({v->shards->min()}, group);
    const DeviceRows *mine = P::rows(v);
    Buffer in = mine && mine->rows == batches * chunk && mine->values && mine->values->type() == low_
                    ? mine->values
                    : copies_.zeros(each, low_);
    Buffer gathered = copies_.buffer(each * static_cast<int64_t>(group.size()), low_),
           whole = copies_.buffer(rows * h, low_);
    nccl_.gather(in->raw(), gathered->raw(), low_, std::vector<int64_t>(group.size(), each), group, current_);
    for (size_t k = 0; k < group.size(); ++k)
      for (int64_t b = 0; b < batches; ++b)
        copies_.copy(whole->at((b * d_.tokens + shards[k].at(0) * chunk) * h), gathered, block,
                     static_cast<int64_t>(k) * each + b * block);
    return withData(meta, DeviceRows{rows, whole});
  }

  // h = tanh(x W1) over the units (fp32, row-major m x units), times `mask` where there is one.
  Buffer innerActivations(const Buffer &weight, int64_t units, const Buffer &x, int64_t m, const Buffer &mask) {
    int64_t h = d_.hidden;
    Buffer inner = copies_.zeros(m * units, DType::F32);
    gemms_->gemm(CUBLAS_OP_T, CUBLAS_OP_N, units, m, h, weight, 0, 2 * h, x, 0, h, inner, 0, units);
    tanhInto(inner->raw(), DType::F32, inner->f32(), m * units, current_);
    if (mask)
      multiplyBy(inner->f32(), mask->f32(), m * units, current_);
    return inner;
  }

  cudaStream_t compute_, collectives_;
  cudaStream_t current_; // where the operation in progress enqueues its work
  DType low_;            // weights, activations and their gradients: F32, or BF16 at bf16
  DType gradType_;       // weight gradients: low_, or F32 with --grad-precision=fp32
  DeviceMemory memory_;
  DeviceCopies copies_{memory_, current_}; // on current_, whichever stream that is then
  NcclGroups nccl_;
  DeviceExperts experts_{copies_, nccl_, current_, low_, d_.hidden};
  PointToPoint messages_;
  std::optional<Gemms> gemms_; // made after memory_, let go before the streams
  cudaEvent_t origin_ = nullptr, stepStart_ = nullptr, stepEnd_ = nullptr; // the step's clock
  bool clockStarted_ = false, stepStarted_ = false;
  std::optional<std::pair<double, double>> span_; // deviceSpan, once measured
  const char *precisionName_ = "fp32";
};

// This process's rank among those on its node.
int localRank() {
  return backend::nodePlace().rank;
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

std::unique_ptr<backend::ComputeRank> makeCudaRank(const backend::ComputeConfig &config, backend::Comm &comm) {
  int local = localRank();
  cudaError_t e = cudaSetDevice(local);
  cudaStream_t compute = nullptr, collectives = nullptr;
  // Freed device memory stays in the allocator's pool across synchronizations (by default
  // the pool gives it back to the driver at each, and the next allocation maps it again), as
  // in a training loop's steady state.
  cudaMemPool_t pool = nullptr;
  uint64_t keep = UINT64_MAX;
  if (e == cudaSuccess)
    e = cudaDeviceGetDefaultMemPool(&pool, local);
  if (e == cudaSuccess)
    e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  if (e == cudaSuccess)
    e = cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking);
  if (e == cudaSuccess && config.overlap)
    e = cudaStreamCreateWithFlags(&collectives, cudaStreamNonBlocking);
  if (!config.overlap) // --no-overlap: collectives in line with compute
    collectives = compute;
  if (e != cudaSuccess)
    comm.abort(std::string("cuda backend: cannot use GPU ") + std::to_string(local) + ": " + cudaGetErrorString(e));
  return std::make_unique<CudaRank>(config, comm, compute, collectives);
}

} // namespace schedc::cuda
