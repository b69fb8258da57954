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
// row's k copies in (row, choice) order (backend::dispatchRows and combineRows say which
// rows go where).
#include "backend/Payload.h"
#include "cpu/CpuRank.h"

namespace schedc::cpu {

namespace {
using sim::Split;
using sim::ValuePtr;
using P = backend::Payloads<Flat, OptState, Rows>;
} // namespace

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
  const int64_t rows = static_cast<int64_t>(meta.second->batches->size()) * d_.tokens;
  std::vector<float> zeros;
  const std::vector<float> &copies = rowsOrZeros(P::rows(g), rows * d_.topK, d_.hidden, zeros);
  bool wantWeight = part != sim::Rank::BackwardPart::Input, wantInput = part != sim::Rank::BackwardPart::Weight;
  return {wantWeight ? emptyOf(meta.first) : meta.first,
          wantInput ? with(meta.second, Rows{rows, sumOfCopies(copies, rows)}) : meta.second};
}

ValuePtr CpuRank::exchangeTokens(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group) {
  const int64_t n = static_cast<int64_t>(group.size()), h = d_.hidden;
  const backend::Routing r = routing(meta->layer, n);
  std::vector<float> zeros;
  const std::vector<float> &in = rowsOrZeros(P::rows(v), rowCount(v), h, zeros);
  std::vector<std::vector<float>> toEach(static_cast<size_t>(n));
  auto append = [&](std::vector<float> &to, int64_t row) {
    to.insert(to.end(), in.begin() + row * h, in.begin() + (row + 1) * h);
  };
  if (sim::atExperts(meta->split)) { // out to the experts: the router's copies, or the output's gradient copied
    const std::vector<std::vector<int64_t>> rows =
        backend::dispatchRows(r, n, static_cast<int64_t>(v->batches->size()), v->split == Split::Routed);
    for (int64_t s = 0; s < n; ++s)
      for (int64_t row : rows[static_cast<size_t>(s)])
        append(toEach[static_cast<size_t>(s)], row);
    Rows at{0, {}};
    for (std::vector<float> &from : comm_.alltoallv(toEach, group))
      at.values.insert(at.values.end(), from.begin(), from.end());
    at.rows = static_cast<int64_t>(at.values.size()) / h;
    return with(meta, std::move(at));
  }
  // Back from the experts: each member's rows to it (its micro-batches' copies routed here,
  // in order: the member's micro-batch count tells how many), each row into its copy's place
  // among this rank's; the layer's output sums a token's copies.
  const int64_t batches = static_cast<int64_t>(meta->batches->size()), held = rowCount(v);
  const std::vector<int64_t> back = rowsOfMembers(group, batches, r.copiesPerSlice(n));
  int64_t row = 0;
  for (int64_t q = 0; q < n; ++q)
    for (int64_t i = 0; i < back[static_cast<size_t>(q)] && row < held; ++i)
      append(toEach[static_cast<size_t>(q)], row++);
  const std::vector<std::vector<int64_t>> places = backend::combineRows(r, n, batches);
  const std::vector<std::vector<float>> fromEach = comm_.alltoallv(toEach, group);
  Rows copies{batches * d_.tokens * r.topK, {}};
  copies.values.assign(static_cast<size_t>(copies.rows * h), 0.0f);
  for (int64_t s = 0; s < n; ++s) {
    const std::vector<int64_t> &to = places[static_cast<size_t>(s)];
    const std::vector<float> &from = fromEach[static_cast<size_t>(s)];
    if (static_cast<int64_t>(from.size()) != static_cast<int64_t>(to.size()) * h)
      continue; // missing data (a wrong schedule forced with --no-verify) reads as zeros
    for (size_t k = 0; k < to.size(); ++k)
      std::copy(from.begin() + static_cast<long>(k) * h, from.begin() + static_cast<long>(k + 1) * h,
                copies.values.begin() + to[k] * h);
  }
  if (meta->kind != sim::Kind::Activation) // the experts' input gradient, at the router: its copies
    return with(meta, std::move(copies));
  return with(meta, Rows{batches * d_.tokens, sumOfCopies(copies.values, batches * d_.tokens)});
}

std::vector<float> CpuRank::sumOfCopies(const std::vector<float> &copies, int64_t rows) {
  const int64_t h = d_.hidden, k = d_.topK;
  std::vector<float> sum(static_cast<size_t>(rows * h), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < h; ++i)
        sum[static_cast<size_t>(r * h + i)] += copies[static_cast<size_t>((r * k + j) * h + i)];
  roundAll(sum, bf16());
  return sum;
}

} // namespace schedc::cpu
