// ComputeRank: the parts every real backend shares.
#include "backend/ComputeRank.h"

namespace schedc::backend {

void ComputeRank::execute(OpKind op, sim::Results &r, const sim::Operands &a, const sim::Rank &rank) {
  ValuePtr &result = r.values[0];
  switch (op) {
    SCHEDC_COLLECTIVE_OP_CASES {
      sim::CollectiveArgs c = sim::collectiveArgs(op, a);
      if (!result->poisoned)
        result = collective(result, *collectiveOf(op), c.value, *c.group);
      return;
    }
  case OpKind::Load:
    if (result->split == sim::Split::Part)
      requireWholeUnits(result->layer, result->total);
    if (!result->poisoned && result->split == sim::Split::Dense) { // the fixed router
      r.values = {emptyOf(r.values[0]), emptyOf(r.values[1])};
      return;
    }
    if (!result->poisoned) {
      (void)routing(result->layer, result->split == sim::Split::Experts ? result->total : 1); // can it be routed?
      r.values[0] = loadWeight(r.values[0]);
      r.values[1] = loadOptState(r.values[1]);
    }
    return;
  case OpKind::Input: result = input(result); return;
  case OpKind::Forward: {
    using P = param::Forward;
    result = forward(result, a.value(P::input), a.value(P::weight));
    return;
  }
  case OpKind::Backward:
  case OpKind::BackwardInput:
  case OpKind::BackwardWeight: {
    using P = param::Backward; // the halves' parameters are the same
    ValuePair grads =
        backward(r.backward, a.value(P::input), a.value(P::grad), a.value(P::weight), sim::backwardPart(op));
    if (op == OpKind::Backward)
      r.values = {grads.first, grads.second};
    else
      result = op == OpKind::BackwardInput ? grads.second : grads.first;
    return;
  }
  case OpKind::Loss: result = loss(result, a.value(param::Loss::input)); return;
  case OpKind::Update: {
    using P = param::Update;
    ValuePair updated = update({r.values[0], r.values[1]}, a.value(P::grad), a.value(P::weight), a.value(P::opt));
    r.values = {updated.first, updated.second};
    return;
  }
  case OpKind::AddGrad: result = addGrad(result, a.value(param::AddGrad::lhs), a.value(param::AddGrad::rhs)); return;
  case OpKind::FakeGrad: result = result->split == sim::Split::Dense ? emptyOf(result) : fakeGrad(result); return;
  case OpKind::Shard:
    result = result->split == sim::Split::Dense && !result->poisoned ? emptyOf(result)
                                                                     : shardOf(result, a.value(param::Shard::value));
    return;
  case OpKind::Send: {
    using P = param::Send;
    if (rank.canExchange(a.integer(P::to), a.integer(P::tag)))
      send(a.integer(P::to), a.integer(P::tag), a.value(P::value));
    return;
  }
  case OpKind::Recv: {
    using P = param::Recv;
    if (rank.canExchange(a.integer(P::from), a.integer(P::tag)))
      result = recv(result, a.integer(P::from), a.integer(P::tag));
    return;
  }
  case OpKind::Offload:
  case OpKind::Prefetch:
    if (!result->poisoned)
      result =
          transfer(result, op == OpKind::Offload ? a.value(param::Offload::value) : a.value(param::Prefetch::value));
    return;
  case OpKind::PostRecv: return; // the `recv` receives (MPI and the cuda backend's channels keep early messages)
  case OpKind::Read: break;      // a storage read: no operation of a backend
  }
  SCHEDC_UNREACHABLE("an operation no real backend computes");
}

Routing ComputeRank::routing(int64_t layer, int64_t slices) {
  RoutingOrError r = routingOf(d_, layer, slices);
  if (!r.error.empty())
    comm_.abort(r.error);
  return r.routing;
}

int64_t ComputeRank::rowCount(const ValuePtr &v) {
  const int64_t batches = static_cast<int64_t>(v->batches->size());
  if (sim::atExperts(v->split))
    return batches * routing(v->layer, v->total).copiesPerSlice(v->total);
  return batches * d_.tokens * (v->split == sim::Split::Routed ? d_.topK : 1);
}

std::vector<int64_t> ComputeRank::rowsOfMembers(const std::vector<int64_t> &group, int64_t batches, int64_t perBatch) {
  std::vector<int64_t> rows;
  for (const std::vector<int64_t> &each : comm_.allgatherInts({batches}, group))
    rows.push_back(each.at(0) * perBatch);
  return rows;
}

std::vector<float> ComputeRank::unitMask(const ValuePtr &w, const ValuePtr &a, int64_t rows) {
  const int64_t unit = unitElements(d_.hidden);
  auto [begin, count] = unitRange(w);
  if (w->split == sim::Split::Experts) {
    Routing r = routing(w->layer, w->total);
    if (!sim::atExperts(a->split) || a->total != w->total) // (only forced with --no-verify): computes nothing
      return std::vector<float>(static_cast<size_t>(rows * count / unit), 0.0f);
    return r.copiesMask(r.copiesTo(a->step, a->total), rows, begin / unit, count / unit);
  }
  if (d_.experts == 0) // a dense layer
    return {};
  return routing(w->layer, 1).wholeMask(rows, begin / unit, count / unit);
}

void ComputeRank::requireWholeUnits(int64_t layer, int64_t parts) {
  if (innerUnits(d_.hidden) % parts != 0)
    comm_.abort("layer " + std::to_string(layer) + " is split into " + std::to_string(parts) +
                " tensor-parallel parts, but its " + std::to_string(innerUnits(d_.hidden)) +
                " inner units (--hidden / 2) do not divide evenly among them");
}

std::pair<int64_t, int64_t> ComputeRank::heldRange(const ValuePtr &v) {
  if (v->split == sim::Split::Dense) // a mixture-of-experts layer's router: no weights
    return {0, 0};
  auto [slice, slices] = sim::singleSlice(*v->shards, v->total);
  if (slice < 0)
    return {0, weightElements()};
  return shard(slice, slices);
}

std::pair<int64_t, int64_t> ComputeRank::unitRange(const ValuePtr &w) {
  auto [slice, slices] = sim::singleSlice(*w->shards, w->total);
  if (slice < 0)
    return {0, weightElements()};
  requireWholeUnits(w->layer, slices);
  return shard(slice, slices);
}

int64_t ComputeRank::sequenceRows(int64_t shards) {
  if (shards <= 0 || d_.tokens % shards != 0)
    comm_.abort("activations are split into " + std::to_string(shards) + " sequence shards, but their " +
                std::to_string(d_.tokens) + " rows (--tokens) do not divide evenly among them");
  return d_.tokens / shards;
}

int64_t ComputeRank::bytesAtPrecision(sim::Kind kind, int64_t elements) const {
  if (kind == sim::Kind::OptState)
    return elements * 4; // fp32 moments and master, each counted in `elements`
  sim::ByteModel widths;
  widths.precision = precision_;
  widths.fp32Gradients = fp32Gradients_;
  return elements * widths.elementBytes(kind);
}

std::pair<int64_t, int64_t> ComputeRank::shard(int64_t s, int64_t total) {
  int64_t n = weightElements();
  if (total < 1 || n % total != 0)
    comm_.abort("the " + std::to_string(d_.hidden) + " x " + std::to_string(d_.hidden) +
                " weight cannot be split into " + std::to_string(total) +
                " equal shards; choose a hidden size whose square is a multiple of " + std::to_string(total));
  return {s * (n / total), n / total};
}

std::string ComputeRank::writeFinalWeights(const sim::Rank &rank, int64_t layers, const std::string &dir,
                                           bool overwrite) {
  // Every updated weight piece this rank holds: (layer, begin, whether it is a bf16 weight
  // rather than an fp32 master or fp32 weight, values).
  std::vector<char> mine;
  auto put = [&](int64_t layer, bool rounded, const Flat &f) {
    for (const Piece &p : f.pieces) {
      putI(mine, layer);
      putI(mine, p.begin);
      putI(mine, rounded ? 1 : 0);
      putFloats(mine, p.values);
    }
  };
  rank.forEachHeld([&](const sim::Storage::Held &h) {
    const ValuePtr &v = h.value;
    if ((v->kind != sim::Kind::Weight && v->kind != sim::Kind::OptState) || v->step < 1 || !v->payload)
      return;
    HostData data = toHost(v);
    if (data.flat)
      put(v->layer, bf16(), *data.flat);
    else if (data.opt)
      put(v->layer, false, data.opt->master);
  });
  return gatherWeights(comm_, mine, layers, d_.hidden, dir, overwrite);
}

} // namespace schedc::backend
