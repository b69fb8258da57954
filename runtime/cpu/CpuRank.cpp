// CpuRank implementation. Data that is missing (only possible when a wrong schedule is
// forced to run with --no-verify) reads as zeros, so such a run finishes and its weights can
// be compared; a verified schedule always has the data it needs.
#include "cpu/CpuRank.h"
#include "backend/Payload.h"
#include "backend/Wire.h"

#include <cstring>
#include <filesystem>
#include <map>

namespace schedc::cpu {

namespace {

using sim::Kind;
using sim::ValuePtr;

using P = backend::Payloads<Flat, OptState, Rows>;

// Elements [begin, begin + count) of `f`: its piece itself when one piece is exactly that
// range, else assembled into `scratch` (zeros where missing).
const std::vector<float> &sliceOf(const Flat *f, int64_t begin, int64_t count, std::vector<float> &scratch) {
  if (f)
    for (const Piece &p : f->pieces)
      if (p.begin == begin && static_cast<int64_t>(p.values.size()) == count)
        return p.values;
  scratch = f ? f->range(begin, count) : std::vector<float>(static_cast<size_t>(count), 0.0f);
  return scratch;
}

} // namespace

ValuePtr CpuRank::with(const ValuePtr &meta, Flat f) {
  int64_t n = f.elements();
  return P::with(meta, std::move(f), bytesAtPrecision(meta->kind, n));
}
ValuePtr CpuRank::with(const ValuePtr &meta, Rows r) {
  int64_t n = r.rows * d_.hidden;
  return P::with(meta, std::move(r), bytesAtPrecision(meta->kind, n));
}
ValuePtr CpuRank::with(const ValuePtr &meta, OptState s) {
  int64_t n = s.master.elements();
  for (const Flat &f : s.moments)
    n += f.elements();
  return P::with(meta, std::move(s), bytesAtPrecision(meta->kind, n));
}

// The units of weight `w` the GEMMs read (a whole layer's, or a tensor-parallel part's):
// its piece itself when it is exactly that range, else assembled (a transient). A weight's
// values are already at the run's precision.
CpuRank::LayerWeights CpuRank::layerWeights(const ValuePtr &w, std::vector<float> &scratch) {
  auto [begin, count] = unitRange(w);
  const std::vector<float> &values = sliceOf(P::flat(w), begin, count, scratch);
  return {values.data(), count / backend::unitElements(d_.hidden)};
}

ValuePtr CpuRank::loadWeight(const ValuePtr &meta) {
  auto [begin, count] = shard(meta->shards->min(), meta->total);
  Flat f;
  f.pieces.push_back(Piece{begin, initialWeight(d_, meta->layer, begin, count)});
  roundAll(f.pieces[0].values, bf16());
  return with(meta, std::move(f));
}

ValuePtr CpuRank::loadOptState(const ValuePtr &meta) {
  auto [begin, count] = shard(meta->shards->min(), meta->total);
  OptState state;
  for (int k = 0; k < o_.moments(); ++k) {
    Flat f;
    f.pieces.push_back(Piece{begin, std::vector<float>(static_cast<size_t>(count), 0.0f)});
    state.moments.push_back(std::move(f));
  }
  if (bf16()) // the fp32 master of the initial weight, as loadWeight makes it before rounding
    state.master.pieces.push_back(Piece{begin, initialWeight(d_, meta->layer, begin, count)});
  return with(meta, std::move(state));
}

ValuePtr CpuRank::input(const ValuePtr &meta) {
  Rows r;
  for (int64_t b : meta->batches->elements()) {
    std::vector<float> x = inputRows(d_, b);
    r.values.insert(r.values.end(), x.begin(), x.end());
    r.rows += d_.tokens;
  }
  roundAll(r.values, bf16());
  return with(meta, std::move(r));
}

ValuePtr CpuRank::forward(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &w) {
  if (w->split == sim::Split::Dense)
    return routerForward(meta, a);
  int64_t m = rowCount(a);
  std::vector<float> scratch;
  LayerWeights weight = layerWeights(w, scratch);
  std::vector<float> zeros, mask = unitMask(w, a, m);
  return with(meta, Rows{m, cpu::forward(rowsOrZeros(P::rows(a), m, d_.hidden, zeros), m, weight.data, weight.units,
                                         d_.hidden, bf16(), mask.empty() ? nullptr : mask.data())});
}

std::pair<ValuePtr, ValuePtr> CpuRank::backward(const std::pair<ValuePtr, ValuePtr> &meta, const ValuePtr &a,
                                                const ValuePtr &g, const ValuePtr &w, sim::Rank::BackwardPart part) {
  if (w->split == sim::Split::Dense)
    return routerBackward(meta, g, part);
  int64_t m = rowCount(a);
  std::vector<float> scratch, dw, dx;
  bool wantWeight = part != sim::Rank::BackwardPart::Input, wantInput = part != sim::Rank::BackwardPart::Weight;
  LayerWeights weight = layerWeights(w, scratch);
  std::vector<float> zerosA, zerosG, mask = unitMask(w, a, m);
  cpu::backward(rowsOrZeros(P::rows(a), m, d_.hidden, zerosA), rowsOrZeros(P::rows(g), m, d_.hidden, zerosG), m,
                weight.data, weight.units, d_.hidden, wantWeight ? &dw : nullptr, wantInput ? &dx : nullptr, bf16(),
                bf16Gradients(), mask.empty() ? nullptr : mask.data());
  Flat gw; // the units' gradient, where they lie in the layer's weight
  gw.pieces.push_back(Piece{unitRange(w).first, std::move(dw)});
  return {wantWeight ? with(meta.first, std::move(gw)) : meta.first,
          wantInput ? with(meta.second, Rows{m, std::move(dx)}) : meta.second};
}

ValuePtr CpuRank::loss(const ValuePtr &meta, const ValuePtr &a) {
  int64_t m = static_cast<int64_t>(meta->batches->size()) * d_.tokens;
  std::vector<float> zeros;
  return with(
      meta, Rows{m, lossGradient(d_, rowsOrZeros(P::rows(a), m, d_.hidden, zeros), meta->batches->elements(), bf16())});
}

std::pair<ValuePtr, ValuePtr> CpuRank::update(const std::pair<ValuePtr, ValuePtr> &meta, const ValuePtr &g,
                                              const ValuePtr &w, const ValuePtr &o) {
  const Flat *grad = P::flat(g);
  const Flat *weight = P::flat(w);
  const OptState *state = P::opt(o);
  Flat nw;
  OptState ns;
  ns.moments.resize(static_cast<size_t>(o_.moments()));
  if (weight)
    for (const Piece &p : weight->pieces) {
      int64_t count = static_cast<int64_t>(p.values.size());
      // The optimizer steps the fp32 master (at bf16, the state's; at fp32 the weight itself);
      // the new weight is its bf16 rounding.
      bool master = bf16() && state && state->master.covers(p.begin, count);
      std::vector<float> values = master ? state->master.range(p.begin, count) : p.values;
      std::vector<float> scratch;
      const std::vector<float> &gslice = sliceOf(grad, p.begin, count, scratch);
      std::vector<std::vector<float>> moments;
      for (int k = 0; k < o_.moments(); ++k)
        moments.push_back(state && k < int(state->moments.size()) ? state->moments[k].range(p.begin, count)
                                                                  : std::vector<float>(static_cast<size_t>(count)));
      std::vector<std::vector<float> *> ptrs;
      for (auto &m : moments)
        ptrs.push_back(&m);
      optimizerStep(o_, w->step, values, ptrs, gslice);
      if (bf16()) {
        std::vector<float> rounded = values;
        roundAll(rounded, true);
        ns.master.pieces.push_back(Piece{p.begin, std::move(values)});
        values = std::move(rounded);
      }
      nw.pieces.push_back(Piece{p.begin, std::move(values)});
      for (int k = 0; k < o_.moments(); ++k)
        ns.moments[k].pieces.push_back(Piece{p.begin, std::move(moments[k])});
    }
  return {with(meta.first, std::move(nw)), with(meta.second, std::move(ns))};
}

ValuePtr CpuRank::addGrad(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &b) {
  Flat sum = P::flat(a) ? *P::flat(a) : Flat{};
  const Flat *other = P::flat(b);
  for (Piece &p : sum.pieces) {
    std::vector<float> add = other ? other->range(p.begin, static_cast<int64_t>(p.values.size()))
                                   : std::vector<float>(p.values.size(), 0.0f);
    for (size_t i = 0; i < p.values.size(); ++i)
      p.values[i] += add[i];
    roundAll(p.values, bf16Gradients());
  }
  return with(meta, std::move(sum));
}

ValuePtr CpuRank::fakeGrad(const ValuePtr &meta) {
  auto [begin, count] = heldRange(meta);
  Flat zero;
  zero.pieces.push_back(Piece{begin, std::vector<float>(static_cast<size_t>(count), 0.0f)});
  return with(meta, std::move(zero));
}

ValuePtr CpuRank::transfer(const ValuePtr &meta, const ValuePtr &v) {
  // A buffer of its own in the other tier, the elements copied (host memory stands for
  // NVMe too): what the update reads there is the copy.
  if (const Flat *f = P::flat(v))
    return with(meta, Flat(*f));
  if (const OptState *s = P::opt(v))
    return with(meta, OptState(*s));
  if (const Rows *r = P::rows(v))
    return with(meta, Rows(*r));
  return meta; // no data (a value forced with --no-verify): none copied
}

ValuePtr CpuRank::emptyOf(const ValuePtr &meta) {
  if (meta->kind != Kind::OptState)
    return with(meta, Flat{});
  OptState state;
  state.moments.resize(static_cast<size_t>(o_.moments()));
  return with(meta, std::move(state));
}

ValuePtr CpuRank::shardOf(const ValuePtr &meta, const ValuePtr &whole) {
  if (meta->poisoned)
    return meta;
  if (meta->split == sim::Split::Sequence) { // this shard's rows of each micro-batch
    int64_t batches = static_cast<int64_t>(meta->batches->size()), chunk = sequenceRows(meta->total);
    std::vector<float> zeros;
    const std::vector<float> &all = rowsOrZeros(P::rows(whole), batches * d_.tokens, d_.hidden, zeros);
    Rows mine{batches * chunk, {}};
    for (int64_t b = 0; b < batches; ++b) {
      auto from = all.begin() + (b * d_.tokens + meta->shards->min() * chunk) * d_.hidden;
      mine.values.insert(mine.values.end(), from, from + chunk * d_.hidden);
    }
    return with(meta, std::move(mine));
  }
  auto [begin, count] = shard(meta->shards->min(), meta->total);
  int64_t n = weightElements();
  auto slice = [&](const Flat *f) {
    std::vector<float> all = f ? f->whole(n) : std::vector<float>(static_cast<size_t>(n), 0.0f);
    Flat part;
    part.pieces.push_back(Piece{begin, std::vector<float>(all.begin() + begin, all.begin() + begin + count)});
    return part;
  };
  if (meta->kind == Kind::OptState) {
    const OptState *in = P::opt(whole);
    OptState state;
    for (int k = 0; k < o_.moments(); ++k)
      state.moments.push_back(slice(in && k < static_cast<int>(in->moments.size()) ? &in->moments[k] : nullptr));
    if (bf16())
      state.master = slice(in ? &in->master : nullptr);
    return with(meta, std::move(state));
  }
  return with(meta, slice(P::flat(whole)));
}

ValuePtr CpuRank::collective(const ValuePtr &meta, CollectiveKind kind, const ValuePtr &v, const sim::IntSet &members) {
  const std::vector<int64_t> &group = members.elements();
  bool activation = meta->kind == Kind::Activation || meta->kind == Kind::ActGrad;
  switch (kind) {
  case CollectiveKind::AllGather:
    return activation ? gatherSequenceShards(meta, v, group) : with(meta, gatherShards(P::flat(v), group));
  case CollectiveKind::AllReduce:
    return activation ? with(meta, allReducePartialSums(meta, v, group)) : with(meta, allReduce(meta, v, group));
  case CollectiveKind::ReduceScatter:
    return activation ? with(meta, reduceScatterPartialSums(meta, v, group))
                      : with(meta, reduceScatter(meta, v, group));
  case CollectiveKind::AllToAll: return exchangeTokens(meta, v, group);
  }
  SCHEDC_UNREACHABLE("a collective the cpu backend does not compute");
}

Flat CpuRank::gatherShards(const Flat *in, const std::vector<int64_t> &group) {
  Flat gathered;
  gathered.pieces = comm_.allgather(in ? in->pieces : std::vector<Piece>{}, group);
  std::sort(gathered.pieces.begin(), gathered.pieces.end(),
            [](const Piece &a, const Piece &b) { return a.begin < b.begin; });
  // Contiguous (the whole, or a tensor-parallel part): one piece, ready for GEMMs.
  int64_t begin = gathered.pieces.empty() ? 0 : gathered.pieces.front().begin, n = gathered.elements();
  if (gathered.pieces.size() > 1 && gathered.covers(begin, n)) {
    std::vector<float> all = gathered.range(begin, n);
    gathered.pieces.assign(1, Piece{begin, std::move(all)});
  }
  return gathered;
}

// The reductions work on the gradient's elements in order (a bf16 gradient is summed in
// float32 and rounded; an fp32 gradient of a bf16 run is not rounded): one copy of the
// (immutable) input, packed; the result is made from it in place.
static std::vector<float> packed(const Flat *in) {
  std::vector<float> buffer;
  if (in && in->pieces.size() == 1)
    buffer = in->pieces[0].values;
  else if (in)
    for (const Piece &p : in->pieces)
      buffer.insert(buffer.end(), p.values.begin(), p.values.end());
  return buffer;
}

Flat CpuRank::allReduce(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  const Flat *in = P::flat(v);
  std::vector<float> buffer = packed(in);
  comm_.allreduce(buffer, group);
  roundAll(buffer, meta->kind == Kind::WeightGrad ? bf16Gradients() : bf16());
  Flat data;
  if (in && in->pieces.size() == 1) {
    data.pieces.push_back(Piece{in->pieces[0].begin, std::move(buffer)});
  } else if (in) {
    size_t at = 0;
    for (const Piece &p : in->pieces) {
      auto from = buffer.begin() + static_cast<long>(at);
      data.pieces.push_back(Piece{p.begin, std::vector<float>(from, from + static_cast<long>(p.values.size()))});
      at += p.values.size();
    }
  }
  return data;
}

// A reduce-scatter sums the operand's slice (the whole gradient, or a tensor-parallel part's)
// and keeps this member's share of it.
Flat CpuRank::reduceScatter(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  const Flat *in = P::flat(v);
  std::vector<float> buffer = packed(in);
  auto [from, size] = heldRange(v);
  if (static_cast<int64_t>(buffer.size()) != size)
    buffer = in ? in->range(from, size) : std::vector<float>(static_cast<size_t>(size), 0.0f);
  Flat part;
  part.pieces.push_back(Piece{heldRange(meta).first, comm_.reduceScatter(buffer, group)});
  roundAll(part.pieces[0].values, meta->kind == Kind::WeightGrad ? bf16Gradients() : bf16());
  return part;
}

Rows CpuRank::allReducePartialSums(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  int64_t rows = static_cast<int64_t>(meta->batches->size()) * d_.tokens;
  std::vector<float> zeros;
  std::vector<float> sum = rowsOrZeros(P::rows(v), rows, d_.hidden, zeros);
  comm_.allreduce(sum, group);
  roundAll(sum, bf16());
  return Rows{rows, std::move(sum)};
}

// Partial sums, completed as sequence shards.
Rows CpuRank::reduceScatterPartialSums(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  int64_t batches = static_cast<int64_t>(meta->batches->size()), rows = batches * d_.tokens, h = d_.hidden;
  std::vector<float> zeros;
  int64_t chunk = sequenceRows(meta->total);
  const std::vector<float> &in = rowsOrZeros(P::rows(v), rows, h, zeros);
  std::vector<float> byShard; // shard s's rows of every micro-batch, then shard s + 1's
  byShard.reserve(in.size());
  for (int64_t s = 0; s < meta->total; ++s)
    for (int64_t b = 0; b < batches; ++b) {
      auto from = in.begin() + (b * d_.tokens + s * chunk) * h;
      byShard.insert(byShard.end(), from, from + chunk * h);
    }
  std::vector<float> mine = comm_.reduceScatter(byShard, group); // the member's position is its shard
  roundAll(mine, bf16());
  return Rows{batches * chunk, std::move(mine)};
}

// An all-gather of sequence shards: each member's rows, placed in the whole activation.
ValuePtr CpuRank::gatherSequenceShards(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  int64_t batches = static_cast<int64_t>(meta->batches->size()), rows = batches * d_.tokens, h = d_.hidden;
  std::vector<float> zeros;
  int64_t chunk = sequenceRows(v->total), shard = v->shards->min();
  const std::vector<float> &in = rowsOrZeros(P::rows(v), batches * chunk, h, zeros);
  std::vector<Piece> mine;
  for (int64_t b = 0; b < batches; ++b) {
    auto from = in.begin() + b * chunk * h;
    mine.push_back(Piece{(b * d_.tokens + shard * chunk) * h, std::vector<float>(from, from + chunk * h)});
  }
  Rows whole{rows, std::vector<float>(static_cast<size_t>(rows * h), 0.0f)};
  for (const Piece &p : comm_.allgather(mine, group))
    std::copy(p.values.begin(), p.values.end(), whole.values.begin() + p.begin);
  return with(meta, std::move(whole));
}

backend::HostData CpuRank::toHost(const ValuePtr &v) {
  backend::HostData d;
  if (const Rows *r = P::rows(v))
    d.rows = *r;
  else if (const Flat *f = P::flat(v))
    d.flat = *f;
  else if (const OptState *o = P::opt(v))
    d.opt = *o;
  return d;
}

void CpuRank::send(int64_t to, int64_t tag, const ValuePtr &v) {
  auto bytes = std::make_shared<std::vector<char>>();
  backend::putData(*bytes, toHost(v));
  comm_.send(to, static_cast<int>(tag), std::move(bytes));
}

ValuePtr CpuRank::recv(const ValuePtr &meta, int64_t from, int64_t tag) {
  return fromHost(meta, backend::readData(comm_.recv(from, static_cast<int>(tag))));
}

ValuePtr CpuRank::fromHost(const ValuePtr &meta, backend::HostData data) {
  if (data.rows)
    return with(meta, std::move(*data.rows));
  if (data.flat)
    return with(meta, std::move(*data.flat));
  if (data.opt)
    return with(meta, std::move(*data.opt));
  return meta;
}

std::string CpuRank::stats() {
  // The GEMM work of this rank and this machine's sgemm rate at the same size, measured now.
  const GemmStats &g = gemmStats();
  double reference = measureSgemm(d_.hidden, 3);
  char line[256];
  std::snprintf(line, sizeof line,
                "schedc: stats: rank %d: gemm %.3f GFLOP in %.4f s = %.1f GFLOP/s; sgemm %lldx%lld alone %.1f "
                "GFLOP/s (%.0f%%); MPI %.4f s\n",
                comm_.rank(), g.flops / 1e9, g.seconds, g.seconds > 0 ? g.flops / g.seconds / 1e9 : 0.0,
                static_cast<long long>(d_.hidden), static_cast<long long>(d_.hidden), reference,
                g.seconds > 0 && reference > 0 ? 100 * g.flops / g.seconds / 1e9 / reference : 0.0, comm_.mpiSeconds());
  return line;
}

} // namespace schedc::cpu
