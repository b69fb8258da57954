// CpuRank's mixture-of-experts layer (backend/Experts.h): the router (the layer's dense
// part, without weights) makes each row's top-k copies; an all-to-all sends each copy to the
// slice that holds its expert (MPI_Alltoallv), in the order the receiver reads its experts
// from; the experts' slice computes its units masked to each row's expert; the combine
// brings the outputs back and sums each row's k of them. The backward mirrors it: the
// output's gradient goes out as copies, the experts' input gradients come back as copies,
// and the router sums them. A whole layer of --experts computes the same with each row's h
// masked to its experts' units. Invariants: every value at the experts holds, for each
// member of the group in turn and each of that member's micro-batches in ascending order,
// the copies routed to its slice in copiesTo's order; every value at the router holds each
// row's k copies in (row, choice) order.
#include "backend/Payload.h"
#include "cpu/CpuRank.h"

#include <algorithm>

namespace schedc::cpu {

namespace {
using sim::Split;
using sim::ValuePtr;
using P = backend::Payloads<Flat, OptState, Rows>;

// This rank's place in `group`.
size_t positionIn(const std::vector<int64_t> &group, int64_t rank) {
  return static_cast<size_t>(std::find(group.begin(), group.end(), rank) - group.begin());
}
} // namespace

backend::Routing CpuRank::routing(int64_t layer, int64_t slices) {
  backend::RoutingOrError r = backend::routingOf(d_, layer, slices);
  if (!r.error.empty())
    comm_.abort(r.error);
  return r.routing;
}

int64_t CpuRank::rowCount(const ValuePtr &v) {
  const int64_t batches = static_cast<int64_t>(v->batches->size());
  if (sim::atExperts(v->split))
    return batches * static_cast<int64_t>(routing(v->layer, v->total).copiesTo(v->step, v->total).size());
  return batches * d_.tokens * (v->split == Split::Routed ? d_.topK : 1);
}

std::vector<float> CpuRank::unitMask(const ValuePtr &w, const ValuePtr &a, int64_t rows) {
  const int64_t unit = backend::unitElements(d_.hidden);
  auto [begin, count] = unitRange(w);
  if (w->split == Split::Experts) {
    backend::Routing r = routing(w->layer, w->total);
    return r.copiesMask(r.copiesTo(a->step, a->total), rows, begin / unit, count / unit);
  }
  if (d_.experts == 0) // a dense layer
    return {};
  return routing(w->layer, 1).wholeMask(rows, begin / unit, count / unit);
}

ValuePtr CpuRank::routerForward(const ValuePtr &meta, const ValuePtr &a) {
  const int64_t rows = static_cast<int64_t>(a->batches->size()) * d_.tokens, h = d_.hidden, k = d_.topK;
  std::vector<float> zeros;
  const std::vector<float> &x = rowsOrZeros(P::rows(a), rows, h, zeros);
  Rows copies{rows * k, {}};
  copies.values.reserve(static_cast<size_t>(rows * k * h));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      copies.values.insert(copies.values.end(), x.begin() + r * h, x.begin() + (r + 1) * h);
  return with(meta, std::move(copies));
}

std::pair<ValuePtr, ValuePtr> CpuRank::routerBackward(const ValuePair &meta, const ValuePtr &g,
                                                      sim::Rank::BackwardPart part) {
  const int64_t rows = static_cast<int64_t>(meta.second->batches->size()) * d_.tokens, h = d_.hidden, k = d_.topK;
  std::vector<float> zeros;
  const std::vector<float> &copies = rowsOrZeros(P::rows(g), rows * k, h, zeros);
  Rows dx{rows, std::vector<float>(static_cast<size_t>(rows * h), 0.0f)};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < h; ++i)
        dx.values[r * h + i] += copies[(r * k + j) * h + i];
  roundAll(dx.values, bf16());
  bool wantWeight = part != sim::Rank::BackwardPart::Input, wantInput = part != sim::Rank::BackwardPart::Weight;
  return {wantWeight ? with(meta.first, Flat{}) : meta.first,
          wantInput ? with(meta.second, std::move(dx)) : meta.second};
}

ValuePtr CpuRank::exchangeTokens(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  const int64_t n = static_cast<int64_t>(group.size()), h = d_.hidden, tokens = d_.tokens;
  const int64_t me = static_cast<int64_t>(positionIn(group, comm_.rank()));
  const backend::Routing r = routing(meta->layer, n);
  const int64_t k = r.topK;
  std::vector<float> zeros;
  std::vector<std::vector<float>> toEach(static_cast<size_t>(n));
  auto append = [&](std::vector<float> &to, const std::vector<float> &from, int64_t row) {
    to.insert(to.end(), from.begin() + row * h, from.begin() + (row + 1) * h);
  };
  if (sim::atExperts(meta->split)) { // out to the experts: the router's copies, or the output's gradient copied
    const bool copied = v->split == Split::Routed;
    const int64_t batches = static_cast<int64_t>(v->batches->size());
    const std::vector<float> &in = rowsOrZeros(P::rows(v), rowCount(v), h, zeros);
    for (int64_t s = 0; s < n; ++s)
      for (int64_t b = 0; b < batches; ++b)
        for (const backend::Routing::Copy &c : r.copiesTo(s, n))
          append(toEach[static_cast<size_t>(s)], in,
                 copied ? (b * tokens + c.token) * k + c.choice : b * tokens + c.token);
    Rows at{0, {}};
    for (std::vector<float> &from : comm_.alltoallv(toEach, group))
      at.values.insert(at.values.end(), from.begin(), from.end());
    at.rows = static_cast<int64_t>(at.values.size()) / h;
    return with(meta, std::move(at));
  }
  // Back from the experts: each member's rows to it (its micro-batches' copies routed here),
  // then each row of this rank's micro-batches from the slice that holds its expert.
  const int64_t batches = static_cast<int64_t>(meta->batches->size());
  const std::vector<std::vector<int64_t>> counts = comm_.allgatherInts({batches}, group);
  const int64_t mine = static_cast<int64_t>(r.copiesTo(me, n).size());
  const std::vector<float> &in = rowsOrZeros(P::rows(v), rowCount(v), h, zeros);
  int64_t row = 0;
  for (int64_t q = 0; q < n; ++q)
    for (int64_t i = 0; i < counts[static_cast<size_t>(q)][0] * mine; ++i)
      if (row < rowCount(v))
        append(toEach[static_cast<size_t>(q)], in, row++);
  const bool summed = meta->kind == sim::Kind::Activation; // the layer's output; a gradient stays as copies
  Rows out{batches * tokens * (summed ? 1 : k), {}};
  out.values.assign(static_cast<size_t>(out.rows * h), 0.0f);
  std::vector<std::vector<float>> fromEach = comm_.alltoallv(toEach, group);
  for (int64_t s = 0; s < n; ++s) {
    const std::vector<backend::Routing::Copy> copies = r.copiesTo(s, n);
    const std::vector<float> &from = fromEach[static_cast<size_t>(s)];
    if (static_cast<int64_t>(from.size()) != batches * static_cast<int64_t>(copies.size()) * h)
      continue; // missing data (a wrong schedule forced with --no-verify) reads as zeros
    size_t at = 0;
    for (int64_t b = 0; b < batches; ++b)
      for (const backend::Routing::Copy &c : copies) {
        int64_t to = summed ? b * tokens + c.token : (b * tokens + c.token) * k + c.choice;
        for (int64_t i = 0; i < h; ++i)
          out.values[static_cast<size_t>(to * h + i)] += from[at++];
      }
  }
  roundAll(out.values, bf16());
  return with(meta, std::move(out));
}

} // namespace schedc::cpu
