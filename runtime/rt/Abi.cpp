// Abi — the functions of schedc/runtime.h that compiled code calls, each a thin layer over
// the sim backend's Rank API. A schedc_rank holds what compiled code cannot: the values of
// the current statement (handles index `temps`, cleared by schedc_step) and the rank's sets
// (reference counted). While parameters are evaluated there is no rank yet: then only
// arithmetic can fail, and its error goes to the parameter diagnostics.
#include "rt/RankContext.h"

#include "sim/Arith.h"

#include <chrono>

namespace schedc::rt {

double RankContext::now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SourceRange RankContext::at(uint32_t loc) const {
  return locations[loc];
}

schedc_value RankContext::keep(sim::ValuePtr v) {
  temps.push_back(std::move(v));
  return static_cast<schedc_value>(temps.size() - 1);
}

schedc_set RankContext::newSet(SetEntry e) {
  e.refs = 1;
  if (!freeSets.empty()) {
    schedc_set h = freeSets.back();
    freeSets.pop_back();
    sets[static_cast<size_t>(h - 1)] = std::move(e);
    return h;
  }
  sets.push_back(std::move(e));
  return static_cast<schedc_set>(sets.size());
}

// The elements of a set, built on demand within the size limit (`at` locates the set).
const sim::IntSet &RankContext::elements(schedc_set h, SourceRange at) {
  SetEntry &e = set(h);
  if (!e.frozen) {
    if (e.isRange) {
      int64_t n = std::max<int64_t>(0, e.hi - e.lo);
      if (n > kMaxSetSize) {
        tooLarge(n, at);
        e.frozen = std::make_shared<const sim::IntSet>();
      } else {
        e.frozen = std::make_shared<const sim::IntSet>(sim::IntSet::range(e.lo, e.hi));
      }
    } else {
      e.frozen = std::make_shared<const sim::IntSet>(e.building);
    }
  }
  return *e.frozen;
}

void RankContext::tooLarge(int64_t n, SourceRange at) {
  if (rank && !rank->cancelled())
    rank->fatal(at, "this set has " + std::to_string(n) + " elements, more than the limit of " +
                        std::to_string(kMaxSetSize));
}

void RankContext::fail(SourceRange at, const std::string &message) {
  if (rank) {
    if (!rank->cancelled())
      rank->fatal(at, message);
  } else if (!paramsFailed) {
    paramsFailed = true;
    paramDiags->error(at, message);
  }
}

} // namespace schedc::rt

using schedc::rt::RankContext;
using schedc::rt::RealTime;
namespace sim = schedc::sim;

namespace {
RankContext &ctx(schedc_rank *r) {
  return *reinterpret_cast<RankContext *>(r);
}
std::vector<int64_t> indexOf(const int64_t *index, uint32_t n) {
  return std::vector<int64_t>(index, index + n);
}
} // namespace

extern "C" {

int32_t schedc_step(schedc_rank *r, uint32_t loc) {
  RankContext &c = ctx(r);
  c.temps.clear();
  return !c.rank->cancelled() && c.rank->step(c.at(loc));
}

int64_t schedc_arith(schedc_rank *r, uint32_t loc, int32_t op, int64_t a, int64_t b) {
  RankContext &c = ctx(r);
  std::string error;
  std::optional<int64_t> v = sim::arith(static_cast<char>(op), a, b, error);
  if (!v)
    c.fail(c.at(loc), error);
  return v.value_or(0);
}

int64_t schedc_rank_id(schedc_rank *r) {
  return ctx(r).rank->id();
}

int64_t schedc_model(schedc_rank *r, int32_t which) {
  RankContext &c = ctx(r);
  if (!c.rank) // parameter defaults: only `ranks` can be meant (undeclared: 1)
    return which == 0 ? 1 : 0;
  const sim::Model &m = c.rank->model();
  return which == 0 ? m.ranks : which == 1 ? m.layers : m.batches;
}

schedc_set schedc_set_range(schedc_rank *r, int64_t lo, int64_t hi) {
  RankContext::SetEntry e;
  e.isRange = true;
  e.lo = lo;
  e.hi = hi;
  return ctx(r).newSet(std::move(e));
}

schedc_set schedc_set_new(schedc_rank *r) {
  return ctx(r).newSet(RankContext::SetEntry{});
}

void schedc_set_add(schedc_rank *r, uint32_t loc, schedc_set s, int64_t v) {
  RankContext &c = ctx(r);
  RankContext::SetEntry &e = c.set(s);
  e.frozen.reset();
  e.building.push_back(v);
  if (static_cast<int64_t>(e.building.size()) > schedc::rt::kMaxSetSize)
    c.tooLarge(static_cast<int64_t>(e.building.size()), c.at(loc));
}

void schedc_set_add_set(schedc_rank *r, uint32_t loc, schedc_set s, schedc_set t) {
  RankContext &c = ctx(r);
  const sim::IntSet &elems = c.elements(t, c.at(loc));
  RankContext::SetEntry &e = c.set(s);
  e.frozen.reset();
  e.building.insert(e.building.end(), elems.elements().begin(), elems.elements().end());
  if (static_cast<int64_t>(e.building.size()) > schedc::rt::kMaxSetSize)
    c.tooLarge(static_cast<int64_t>(e.building.size()), c.at(loc));
}

int64_t schedc_set_size(schedc_rank *r, schedc_set s) {
  RankContext &c = ctx(r);
  RankContext::SetEntry &e = c.set(s);
  if (e.isRange)
    return std::max<int64_t>(0, e.hi - e.lo);
  return static_cast<int64_t>(c.elements(s, {}).size());
}

int64_t schedc_set_at(schedc_rank *r, schedc_set s, int64_t i) {
  RankContext &c = ctx(r);
  RankContext::SetEntry &e = c.set(s);
  return e.isRange ? e.lo + i : c.elements(s, {}).elements()[static_cast<size_t>(i)];
}

int32_t schedc_set_contains(schedc_rank *r, schedc_set s, int64_t v) {
  RankContext &c = ctx(r);
  RankContext::SetEntry &e = c.set(s);
  return e.isRange ? v >= e.lo && v < e.hi : c.elements(s, {}).contains(v);
}

int32_t schedc_set_equal(schedc_rank *r, uint32_t loc, schedc_set a, schedc_set b) {
  RankContext &c = ctx(r);
  return c.elements(a, c.at(loc)) == c.elements(b, c.at(loc));
}

void schedc_set_retain(schedc_rank *r, schedc_set s) {
  if (s)
    ++ctx(r).set(s).refs;
}

void schedc_set_release(schedc_rank *r, schedc_set s) {
  if (!s)
    return;
  RankContext &c = ctx(r);
  RankContext::SetEntry &e = c.set(s);
  if (--e.refs == 0) {
    e = RankContext::SetEntry{};
    c.freeSets.push_back(s);
  }
}

void schedc_mesh(schedc_rank *r, uint32_t loc, const int64_t *sizes, const uint32_t *sizeLocs, uint32_t n) {
  RankContext &c = ctx(r);
  std::vector<schedc::SourceRange> at;
  for (uint32_t i = 0; i < n; ++i)
    at.push_back(c.at(sizeLocs[i]));
  c.rank->declareMesh(c.at(loc), c.axes, std::vector<int64_t>(sizes, sizes + n), at);
}

int64_t schedc_axis_coord(schedc_rank *r, uint32_t loc, uint32_t axis) {
  return ctx(r).rank->axisCoord(axis, ctx(r).at(loc));
}

int64_t schedc_axis_size(schedc_rank *r, uint32_t loc, uint32_t axis) {
  return ctx(r).rank->axisSize(axis, ctx(r).at(loc));
}

int64_t schedc_rank_at(schedc_rank *r, uint32_t loc, uint32_t n, const int64_t *coords) {
  return ctx(r).rank->rankAt(std::vector<int64_t>(coords, coords + n), ctx(r).at(loc));
}

void schedc_store(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n, schedc_value v) {
  RankContext &c = ctx(r);
  c.rank->store(array, indexOf(index, n), c.temps[static_cast<size_t>(v)], c.at(loc));
}

schedc_value schedc_read(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n) {
  RankContext &c = ctx(r);
  return c.keep(c.rank->read(array, indexOf(index, n), c.at(loc)));
}

void schedc_free(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n) {
  RankContext &c = ctx(r);
  c.rank->free(array, indexOf(index, n), c.at(loc));
}

void schedc_load(schedc_rank *r, uint32_t loc, int64_t layer, int64_t shard, int64_t of, schedc_value *out) {
  RankContext &c = ctx(r);
  auto [w, o] = c.rank->load(c.at(loc), layer, shard, of);
  if (c.computing() && !w->poisoned) {
    w = c.compute->loadWeight(w);
    o = c.compute->loadOptState(o);
  }
  out[0] = c.keep(std::move(w));
  out[1] = c.keep(std::move(o));
}

schedc_value schedc_input(schedc_rank *r, uint32_t loc, schedc_set batches, uint32_t batchesLoc) {
  RankContext &c = ctx(r);
  sim::IntSet b = c.elements(batches, c.at(batchesLoc));
  sim::ValuePtr v = c.rank->input(c.at(loc), b);
  return c.keep(c.computing() ? c.compute->input(v) : v);
}

schedc_value schedc_forward(schedc_rank *r, uint32_t loc, int64_t layer, schedc_value input, schedc_value weight) {
  RankContext &c = ctx(r);
  RealTime timer(c);
  sim::ValuePtr v = c.rank->forward(c.at(loc), layer, c.temps[input], c.temps[weight]);
  return c.keep(c.computing() ? c.compute->forward(v, c.temps[input], c.temps[weight]) : v);
}

namespace {

// backward and the halves of a split backward: the checks and clock, then the data.
std::pair<sim::ValuePtr, sim::ValuePtr> backwardResults(RankContext &c, uint32_t loc, int64_t layer, schedc_value input,
                                                        schedc_value grad, schedc_value weight,
                                                        sim::Rank::BackwardPart part) {
  RealTime timer(c);
  auto results = c.rank->backward(c.at(loc), layer, c.temps[input], c.temps[grad], c.temps[weight], part);
  if (c.computing())
    results = c.compute->backward(results, c.temps[input], c.temps[grad], c.temps[weight], part);
  return results;
}

} // namespace

void schedc_backward(schedc_rank *r, uint32_t loc, int64_t layer, schedc_value input, schedc_value grad,
                     schedc_value weight, schedc_value *out) {
  RankContext &c = ctx(r);
  auto results = backwardResults(c, loc, layer, input, grad, weight, sim::Rank::BackwardPart::Both);
  out[0] = c.keep(std::move(results.first));
  out[1] = c.keep(std::move(results.second));
}

schedc_value schedc_backward_part(schedc_rank *r, uint32_t loc, int32_t part, int64_t layer, schedc_value input,
                                  schedc_value grad, schedc_value weight) {
  RankContext &c = ctx(r);
  bool inputHalf = part == 0;
  auto results = backwardResults(c, loc, layer, input, grad, weight,
                                 inputHalf ? sim::Rank::BackwardPart::Input : sim::Rank::BackwardPart::Weight);
  return c.keep(inputHalf ? std::move(results.second) : std::move(results.first));
}

schedc_value schedc_loss(schedc_rank *r, uint32_t loc, schedc_value input) {
  RankContext &c = ctx(r);
  RealTime timer(c);
  sim::ValuePtr v = c.rank->loss(c.at(loc), c.temps[input]);
  return c.keep(c.computing() ? c.compute->loss(v, c.temps[input]) : v);
}

void schedc_update(schedc_rank *r, uint32_t loc, int64_t layer, schedc_value grad, schedc_value weight,
                   schedc_value opt, schedc_value *out) {
  RankContext &c = ctx(r);
  RealTime timer(c);
  auto results = c.rank->update(c.at(loc), layer, c.temps[grad], c.temps[weight], c.temps[opt]);
  if (c.computing())
    results = c.compute->update(results, c.temps[grad], c.temps[weight], c.temps[opt]);
  out[0] = c.keep(std::move(results.first));
  out[1] = c.keep(std::move(results.second));
}

schedc_value schedc_add_grad(schedc_rank *r, uint32_t loc, schedc_value a, schedc_value b) {
  RankContext &c = ctx(r);
  sim::ValuePtr v = c.rank->addGrad(c.at(loc), c.temps[a], c.temps[b]);
  return c.keep(c.computing() ? c.compute->addGrad(v, c.temps[a], c.temps[b]) : v);
}

schedc_value schedc_fake_grad(schedc_rank *r, uint32_t loc, int64_t layer, schedc_set batches, uint32_t batchesLoc) {
  RankContext &c = ctx(r);
  sim::IntSet b = c.elements(batches, c.at(batchesLoc));
  sim::ValuePtr v = c.rank->fakeGrad(c.at(loc), layer, b);
  return c.keep(c.computing() ? c.compute->fakeGrad(v) : v);
}

schedc_value schedc_shard(schedc_rank *r, uint32_t loc, schedc_value v, int64_t shard, int64_t of) {
  RankContext &c = ctx(r);
  sim::ValuePtr s = c.rank->shard(c.at(loc), c.temps[v], shard, of);
  return c.keep(c.computing() ? c.compute->shardOf(s, c.temps[v]) : s);
}

schedc_value schedc_collective(schedc_rank *r, uint32_t loc, int32_t kind, schedc_value v, int32_t groupKind,
                               int64_t group, uint32_t groupLoc) {
  RankContext &c = ctx(r);
  RealTime timer(c);
  std::shared_ptr<const sim::IntSet> members;
  if (groupKind == 0)
    members = c.rank->allRanks();
  else if (groupKind == 1)
    members = c.rank->axisGroup(static_cast<size_t>(group), c.at(groupLoc));
  else
    members = std::make_shared<const sim::IntSet>(c.elements(group, c.at(groupLoc)));
  auto k = kind == 0   ? sim::CollectiveKind::AllReduce
           : kind == 1 ? sim::CollectiveKind::AllGather
                       : sim::CollectiveKind::ReduceScatter;
  sim::ValuePtr result = c.rank->collective(c.at(loc), k, c.temps[v], members);
  if (c.computing() && !result->poisoned)
    result = c.compute->collective(result, k, c.temps[v], *members);
  return c.keep(std::move(result));
}

void schedc_send(schedc_rank *r, uint32_t loc, int64_t to, schedc_value v, int64_t tag) {
  RankContext &c = ctx(r);
  RealTime timer(c);
  c.rank->send(c.at(loc), to, c.temps[v], tag);
  if (c.computing() && c.rank->canExchange(to, tag))
    c.compute->send(to, tag, c.temps[v]);
}

schedc_value schedc_recv(schedc_rank *r, uint32_t loc, int64_t from, int64_t tag) {
  RankContext &c = ctx(r);
  RealTime timer(c);
  sim::ValuePtr v = c.rank->recv(c.at(loc), from, tag);
  if (c.computing() && c.rank->canExchange(from, tag))
    v = c.compute->recv(v, from, tag);
  return c.keep(std::move(v));
}

} // extern "C"
