// Abi — the functions of schedc/runtime.h that compiled code calls, each a thin layer over
// the sim backend's Rank API; every operation comes through schedc_operation, which runs the
// sim backend's dispatch (engine/Execute.h) and then, on the rank this process computes, the
// real backend's (backend/ComputeRank.h). A schedc_rank holds what compiled code cannot: the
// values of the current statement (handles index `temps`, cleared by schedc_step) and the
// rank's sets (reference counted). While parameters are evaluated there is no rank yet: then
// only arithmetic can fail, and its error goes to the parameter diagnostics.
#include "rt/RankContext.h"

#include "engine/Execute.h"
#include "sim/Arith.h"

#include <chrono>
#include <type_traits>

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
const sim::SetPtr &RankContext::frozen(schedc_set h, SourceRange at) {
  SetEntry &e = set(h);
  if (!e.frozen) {
    if (e.isRange) {
      int64_t n = std::max<int64_t>(0, e.hi - e.lo);
      if (n > kMaxSetSize) {
        tooLarge(n, at);
        e.frozen = sim::makeSet();
      } else {
        e.frozen = sim::makeSet(sim::IntSet::range(e.lo, e.hi));
      }
    } else {
      e.frozen = sim::makeSet(e.building);
    }
  }
  return e.frozen;
}

void RankContext::tooLarge(int64_t n, SourceRange at) {
  if (rank && !rank->cancelled())
    rank->fatal(at, "this set has " + std::to_string(n) + " elements, more than the limit of " +
                        std::to_string(kMaxSetSize));
}

sim::Operands RankContext::operands(OpKind op, const schedc_operand *args) {
  sim::Operands out;
  std::span<const ParamInfo> params = opInfo(op).params;
  for (size_t i = 0; i < params.size(); ++i) {
    const schedc_operand &a = args[i];
    sim::Operand &o = out.add();
    switch (params[i].kind) {
    case ParamKind::Int: o.integer = a.value; break;
    case ParamKind::Set: o.set = frozen(a.value, at(a.loc)); break;
    case ParamKind::Value: o.value = temps[static_cast<size_t>(a.value)]; break;
    case ParamKind::Group: o.group = group(a); break;
    }
  }
  return out;
}

sim::SetPtr RankContext::group(const schedc_operand &g) {
  switch (g.group) {
  case SCHEDC_GROUP_ALL: return rank->allRanks();
  case SCHEDC_GROUP_AXIS: return rank->axisGroup(static_cast<size_t>(g.value), at(g.loc));
  case SCHEDC_GROUP_RANKS: {
    const SetEntry &e = set(g.value);
    if (e.isRange && e.hi - e.lo <= kMaxSetSize) // `group = a..b`: the run's one set of those ranks
      return rank->rangeGroup(e.lo, e.hi);
    return frozen(g.value, at(g.loc));
  }
  }
  SCHEDC_UNREACHABLE("a group of no kind");
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
sim::SlotIndex indexOf(const int64_t *index, uint32_t n) {
  return sim::SlotIndex(index, index + n);
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
    return which == SCHEDC_MODEL_RANKS ? 1 : 0;
  const sim::Model &m = c.rank->model();
  switch (which) {
  case SCHEDC_MODEL_RANKS: return m.ranks;
  case SCHEDC_MODEL_LAYERS: return m.layers;
  case SCHEDC_MODEL_BATCHES: return m.batches;
  }
  SCHEDC_UNREACHABLE("schedc_model asked for no size of the model");
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

void schedc_overlap(schedc_rank *r, uint32_t loc, uint32_t phase) {
  RankContext &c = ctx(r);
  c.rank->overlap(c.at(loc), phase == 0   ? sim::Rank::PairPhase::Begin
                             : phase == 1 ? sim::Rank::PairPhase::Second
                                          : sim::Rank::PairPhase::End);
}

void schedc_group(schedc_rank *r, uint32_t loc, uint32_t phase) {
  RankContext &c = ctx(r);
  c.rank->group(c.at(loc), phase == 0);
}

void schedc_require(schedc_rank *r, uint32_t loc, int64_t holds, uint32_t same_on_every_rank, const char *message) {
  RankContext &c = ctx(r);
  c.rank->require(c.at(loc), holds != 0, same_on_every_rank != 0, message);
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

int32_t schedc_held(schedc_rank *r, uint32_t array, const int64_t *index, uint32_t n) {
  return ctx(r).rank->holds(array, indexOf(index, n)) ? 1 : 0;
}

void schedc_free(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n) {
  RankContext &c = ctx(r);
  c.rank->free(array, indexOf(index, n), c.at(loc));
}

void schedc_operation(schedc_rank *r, uint32_t loc, int32_t op, const schedc_operand *args, schedc_value *results) {
  RankContext &c = ctx(r);
  SCHEDC_ASSERT(op > static_cast<int32_t>(schedc::OpKind::Read) && op < schedc::kOpKinds,
                "schedc_operation called with no operation the runtime knows");
  auto kind = static_cast<schedc::OpKind>(op);
  sim::Operands operands = c.operands(kind, args);
  RealTime timer(c);
  sim::Results out = sim::execute(*c.rank, kind, c.at(loc), operands);
  if (c.computing())
    c.compute->execute(kind, out, operands, *c.rank);
  for (size_t i = 0; i < out.count; ++i)
    results[i] = c.keep(std::move(out.values[i]));
}

} // extern "C"

// Each prototype of runtime.h is the signature its entry in SCHEDC_RUNTIME_FUNCTIONS says,
// which is what codegen declares.
namespace schedc::rt::abi {
using rank = schedc_rank *;
using i32 = int32_t;
using u32 = uint32_t;
using i64 = int64_t;
using handle = int64_t;
using i64s = const int64_t *;
using u32s = const uint32_t *;
using str = const char *;
using args = const schedc_operand *;
using out = schedc_value *;
using none = void;
#define SCHEDC_CHECK_PROTOTYPE(name, result, params)                                                                   \
  static_assert(std::is_same_v<decltype(&::name), result(*) params>, #name " is not what the ABI's list says");
SCHEDC_RUNTIME_FUNCTIONS(SCHEDC_CHECK_PROTOTYPE)
#undef SCHEDC_CHECK_PROTOTYPE
} // namespace schedc::rt::abi
