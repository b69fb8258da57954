// Collectives and point-to-point messages. A collective is a barrier over its group: the
// k-th collective a rank calls on a group meets the k-th call of every other member; all
// must agree on kind and layer (else an error names both places). When the last member
// arrives, every member logs the call's event, which waits for every member (so it starts
// when the last is ready; cost/Placement.h). `send` never waits; `recv` waits for the next
// message from its source, and its event waits for the send's. Messages are matched per
// (source, tag), first in first out; under ordered point-to-point, through the ranks'
// streams instead (sim/OrderedChannels.cpp).
#include "sim/World.h"

#include <algorithm>
#include <functional>

namespace schedc::sim {

World::Group &World::groupFor(Lane &lane, const SetPtr &members) {
  const std::vector<int64_t> &elems = members->elements();
  Group *&recent =
      lane.recentGroups[static_cast<uint64_t>(elems.front() * 31 + static_cast<int64_t>(elems.size())) % kRecentGroups];
  if (recent && (recent->members == members || recent->members->elements() == elems))
    return *recent;
  std::unique_lock<std::mutex> lock(groupsLock_, std::defer_lock);
  if (parallel_)
    lock.lock();
  auto init = [&](std::unique_ptr<Group> &g) -> Group & {
    if (!g) {
      g = std::make_unique<Group>();
      g->members = kept(members);
      g->calls.assign(members->size(), 0);
    }
    return *g;
  };
  recent = members == allRanks_ || *members == *allRanks_ ? &init(allGroup_) : &init(groups_[elems]);
  return *recent;
}

int32_t World::nodesOf(Group &g) const {
  if (g.nodes == 0) {
    const cost::CostModel &model = *options_.costModel;
    g.nodes = 1;
    if (model.placesRanksOnNodes()) { // members ascend, and so do their nodes
      const std::vector<int64_t> &members = g.members->elements();
      for (size_t i = 1; i < members.size(); ++i)
        g.nodes += model.nodeOf(members[i]) != model.nodeOf(members[i - 1]);
    }
  }
  return g.nodes;
}

std::vector<std::vector<int64_t>> World::collectiveGroups() const {
  std::vector<std::vector<int64_t>> groups;
  if (allGroup_)
    groups.push_back(allGroup_->members->elements());
  for (const auto &[members, group] : groups_)
    groups.push_back(members);
  return groups;
}

namespace {

// How many members ahead combine asks for their values' memory (see there).
constexpr size_t kAhead = 8;

void prefetchElements(const SetPtr &s) {
  if (s)
    __builtin_prefetch(s->elements().data());
}

std::string groupName(const IntSet &members, int64_t ranks) {
  return static_cast<int64_t>(members.size()) == ranks ? "all ranks" : "ranks " + members.str();
}

// The elements of `all` (the members' pieces in group order, member i's from starts[i]) that
// come in more than once, each once for every repeat, and the higher of the two members
// that hold the lowest of them.
struct Overlap {
  std::vector<int64_t> twice;
  int64_t secondOwner = -1;
};

Overlap overlapOf(const std::vector<int64_t> &all, const std::vector<size_t> &starts, const IntSet &members) {
  std::vector<int64_t> owner(all.size());
  for (size_t i = 0; i + 1 < starts.size(); ++i)
    std::fill(owner.begin() + starts[i], owner.begin() + starts[i + 1], members.elements()[i]);
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return all[a] < all[b]; });
  Overlap overlap;
  for (size_t i = 1; i < order.size(); ++i)
    if (all[order[i]] == all[order[i - 1]]) {
      overlap.twice.push_back(all[order[i]]);
      if (overlap.secondOwner < 0)
        overlap.secondOwner = std::max(owner[order[i]], owner[order[i - 1]]);
    }
  return overlap;
}

} // namespace

std::string World::withTag(int64_t tag) const {
  if (!tag)
    return "";
  std::string meaning = options_.tagMeaning ? options_.tagMeaning(tag) : "";
  return " with tag " + std::to_string(tag) + (meaning.empty() ? "" : " (" + meaning + ")");
}

std::string Rank::waiting() const {
  if (wait_.collective)
    return "waits here in " + std::string(collectiveName(wait_.kind)) + " over " +
           groupName(*wait_.members, world_.model_.ranks) + " for the other ranks to call it";
  return "waits here to receive from rank " + std::to_string(wait_.peer) + world_.withTag(wait_.tag);
}

// Computes the result of a complete collective, reporting problems that only the whole
// group shows (different shards, micro-batches summed twice).
//
// The members' values live with their ranks, those of other lanes in another processor's
// cache: each loop over them asks for the values, then their sets, a few members ahead
// (an all-reduce over ddp 1024 x 32's 1024 ranks: 40 -> 21 us a call, on two threads).
void World::combine(Collective &c, const IntSet &members, Rank &reporter, SourceRange at) {
  size_t n = c.inputs.size();
  bool poisoned = c.mismatched;
  bool forged = false;
  for (size_t i = 0; i < n; ++i) {
    if (i + 2 * kAhead < n)
      __builtin_prefetch(c.inputs[i + 2 * kAhead].get());
    if (i + kAhead < n) {
      __builtin_prefetch(c.inputs[i + kAhead]->batches.get());
      __builtin_prefetch(c.inputs[i + kAhead]->shards.get());
    }
    poisoned |= c.inputs[i]->poisoned;
    forged |= c.inputs[i]->forged;
  }
  const Value &first = *c.inputs[0];
  // Reports `message()`, out of line: the words are put together only for a failure.
  Failure fail = [&](const char *code, const Words &message) {
    reporter.errorWith(at, code, message);
    poisoned = true;
  };
  for (size_t i = 1; i < n && !poisoned; ++i)
    if (c.inputs[i]->kind != first.kind)
      fail("collective-kinds", [&] {
        return std::string(collectiveName(c.kind)) + " over " + groupName(members, reporter.model().ranks) +
               " combines " + kindPlural(first.kind) + " (rank " + std::to_string(members.elements()[0]) + ") with " +
               kindPlural(c.inputs[i]->kind) + " (rank " + std::to_string(members.elements()[i]) + ")";
      });
  if (first.kind == Kind::Activation || first.kind == Kind::ActGrad) {
    c.result = unitePieces(c, members, poisoned, fail);
    if (c.kind == CollectiveKind::ReduceScatter && !c.result.poisoned && c.result.split != Split::None) {
      fail("collective-partials", [&] {
        return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer) + " splits a sum of tensor-parallel parts " +
               c.result.shards->str() + " of " + std::to_string(c.result.total) + " only; every part must be in it";
      });
      c.result.poisoned = true;
    }
    c.result.forged = forged;
    return;
  }
  // Check each member's value against the first, then unite all shards (allgather) or
  // micro-batches (the reductions); an element seen twice is an overlap.
  const char *op = collectiveName(c.kind);
  std::vector<int64_t> all;
  std::vector<size_t> starts; // where each member's elements begin in `all` (for messages)
  for (size_t i = 0; i < n && !poisoned; ++i) {
    const Value &v = *c.inputs[i];
    if (i + kAhead < n)
      prefetchElements(c.kind == CollectiveKind::AllGather ? c.inputs[i + kAhead]->shards
                                                           : c.inputs[i + kAhead]->batches);
    starts.push_back(all.size());
    auto who = [&] { return "rank " + std::to_string(members.elements()[i]); };
    if (c.kind == CollectiveKind::AllGather) {
      if (v.total != first.total || v.step != first.step)
        fail("collective-shards", [&] {
          return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer) +
                 " combines weights of different shard counts or steps (" + who() + " has " + v.describe() + ")";
        });
      all.insert(all.end(), v.shards->elements().begin(), v.shards->elements().end());
    } else {
      if (v.total != first.total || *v.shards != *first.shards)
        fail("collective-shards", [&] {
          return std::string(op) + " of layer " + std::to_string(c.layer) + " sums gradients of different shards (" +
                 who() + " has " + v.describe() + ")";
        });
      else if (c.kind == CollectiveKind::ReduceScatter && v.split == Split::Part &&
               singleSlice(*v.shards, v.total).first < 0)
        fail("collective-shards", [&] {
          return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer) +
                 " needs the gradient of one whole tensor-parallel part, but " + who() + " has " + v.describe();
        });
      else if (c.kind == CollectiveKind::ReduceScatter && v.split != Split::Part && !v.complete())
        fail("collective-shards", [&] {
          return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer) + " needs complete gradients, but " + who() +
                 " has " + v.describe();
        });
      all.insert(all.end(), v.batches->elements().begin(), v.batches->elements().end());
    }
  }
  starts.push_back(all.size());
  IntSet united;
  if (!poisoned) {
    // Members' pieces mostly come in ascending order (ddp's micro-batches, fsdp's shards):
    // then none comes twice, and there is nothing to sort (an all-reduce over 1024 ranks
    // spent more than half of its completion sorting).
    if (std::adjacent_find(all.begin(), all.end(), std::greater_equal<>()) != all.end()) {
      auto [twice, secondOwner] = overlapOf(all, starts, members);
      if (!twice.empty()) {
        if (c.kind == CollectiveKind::AllGather)
          fail("collective-overlap", [&] {
            return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer) + " receives shards " + IntSet(twice).str() +
                   " from more than one rank";
          });
        else
          fail("collective-overlap", [&] {
            return std::string(op) + " of layer " + std::to_string(c.layer) + " sums the gradient of micro-batches " +
                   IntSet(twice).str() + " more than once (rank " + std::to_string(secondOwner) + " has it too)";
          });
      }
    }
    united = IntSet(std::move(all));
  }
  Value out = first;
  out.forged = forged;
  out.poisoned = poisoned;
  if (c.kind != CollectiveKind::AllGather) {
    out.batches = setOf(std::move(united));
  } else if (first.split != Split::Part) {
    out.shards = setOf(std::move(united));
  } else { // a part's shards gathered: the part itself, or the whole layer once every part is in
    auto [slice, slices] = singleSlice(united, first.total);
    if (slice < 0) {
      out.shards = setOf(std::move(united));
    } else {
      out.shards = singleSet(slice);
      out.total = slices;
      if (slices == 1)
        out.split = Split::None;
    }
  }
  c.result = std::move(out);
}

// A collective over the pieces of one activation (or activation gradient: same layer and
// micro-batches): tensor-parallel partial sums summed (all-reduce, reduce-scatter) or
// sequence shards gathered (all-gather). Each piece must come in once; the result holds
// the pieces united, and is whole once all are in.
Value World::unitePieces(const Collective &c, const IntSet &members, bool poisoned, const Failure &fail) {
  const Value &first = *c.inputs[0];
  bool gather = c.kind == CollectiveKind::AllGather;
  auto prefix = [&] {
    return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer);
  };
  const char *code = gather ? "collective-sequence" : "collective-partials";
  std::vector<int64_t> pieces;
  for (size_t i = 0; i < c.inputs.size() && !poisoned; ++i) {
    const Value &v = *c.inputs[i];
    if (v.total != first.total || *v.batches != *first.batches) {
      fail(code, [&] {
        return prefix() +
               (gather ? " gathers sequence shards of different micro-batches or shard counts (rank "
                       : " sums partial sums of different micro-batches or part counts (rank ") +
               std::to_string(members.elements()[i]) + " has " + v.describe() + ", rank " +
               std::to_string(members.elements()[0]) + " " + first.describe() + ")";
      });
      poisoned = true;
    }
    pieces.insert(pieces.end(), v.shards->elements().begin(), v.shards->elements().end());
  }
  Value out = first;
  out.poisoned = poisoned;
  if (poisoned)
    return out;
  std::sort(pieces.begin(), pieces.end());
  if (auto twice = std::adjacent_find(pieces.begin(), pieces.end()); twice != pieces.end()) {
    fail(code, [&] {
      std::string piece = std::to_string(*twice) + " of " + std::to_string(first.total);
      return prefix() + (gather ? " receives sequence shard " + piece + " from more than one rank"
                                : " adds tensor-parallel part " + piece + " more than once");
    });
    out.poisoned = true;
    return out;
  }
  IntSet united(std::move(pieces));
  if (static_cast<int64_t>(united.size()) == first.total) { // every piece: the whole
    out.split = Split::None;
    out.shards = emptySet();
    out.total = 1;
  } else {
    out.shards = setOf(std::move(united));
  }
  return out;
}

Value World::Collective::resultFor(size_t position, const Value &of) const {
  Value mine = of;
  if (kind == CollectiveKind::ReduceScatter) { // each member keeps its own shard of the sum
    int64_t n = static_cast<int64_t>(kinds.size()), pos = static_cast<int64_t>(position);
    if (mine.kind == Kind::Activation || mine.kind == Kind::ActGrad) { // split along the sequence
      mine.shards = singleSet(pos);
      mine.total = n;
      mine.split = Split::Sequence;
    } else { // of the gradient's one slice (the whole, or a tensor-parallel part): slice p·n + pos of t·n
      auto [slice, slices] = singleSlice(*mine.shards, mine.total);
      if (slice < 0) // a poisoned input
        slice = 0, slices = 1;
      mine.shards = singleSet(slice * n + pos);
      mine.total = slices * n;
    }
  }
  return mine;
}

// The member that arrived last runs first (each goes to the front): the last to run before
// the collective completed are the likeliest to be in cache still. Where every member waits
// in every round (ddp's all-reduces), rounds go back and forth over the ranks, not round and
// round (where each rank resumed is the one least recently run). On several threads, where
// arrivals are not listed, in the group's order, a lane's worth handed over at a time.
void World::wakeMembers(const Collective &c, const std::vector<int64_t> &members, int64_t self) {
  if (!parallel_) {
    for (uint32_t p : c.arrivals)
      if (members[p] != self)
        schedule(*ranks_[members[p]]);
    return;
  }
  thread_local std::vector<Rank *> woken;
  woken.clear();
  for (int64_t member : members)
    if (member != self)
      woken.push_back(ranks_[member].get());
  wake(woken);
}

bool World::awaitCall(Rank &r, Collective &c, uint32_t members, Rank::Wait wait) {
  r.wait_ = std::move(wait);
  for (;;) {
    if (c.done.load(std::memory_order_acquire))
      return !r.cancelled();
    if (r.cancelled()) {
      uint32_t before = c.arrived.fetch_or(Collective::kAbandoned, std::memory_order_acq_rel);
      if ((before & Collective::kAbandoned) || before != members)
        return false; // no member completes it now
      // Its last member is completing it, and wakes every member when it has.
    }
    r.blocked_ = true;
    Fiber::yield();
  }
}

void World::handBack(Collective &c) const {
  c.laneResults.assign(lanes_.size(), c.result);
  for (Value &v : c.laneResults) {
    v.shards = forLane(v.shards);
    v.batches = forLane(v.batches);
  }
  c.result = Value();
  for (ValuePtr &in : c.inputs)
    in.reset();
}

// Every member must have called the same collective on the same layer as the group's
// lowest rank; the first that did not is reported, naming both places.
void World::matchCalls(Collective &c, const IntSet &members, Rank &reporter) {
  const auto &ranks = members.elements();
  c.kind = c.kinds[0];
  c.layer = c.inputs[0]->layer;
  for (size_t i = 1; i < ranks.size(); ++i) {
    bool otherCall = c.kinds[i] != c.kind;
    if (!otherCall && (c.inputs[i]->poisoned || c.inputs[0]->poisoned || c.inputs[i]->layer == c.layer))
      continue; // matches (the words of a mismatch are put together only for one)
    reportMismatch(c, members, reporter, i);
    c.mismatched = true;
    return;
  }
}

void World::reportMismatch(const Collective &c, const IntSet &members, Rank &reporter, size_t i) {
  const auto &ranks = members.elements();
  bool otherCall = c.kinds[i] != c.kind;
  std::string where = groupName(members, reporter.model().ranks);
  std::string me = "rank " + std::to_string(ranks[i]), first = "rank " + std::to_string(ranks[0]);
  if (otherCall) {
    reporter.error(c.at[i], "collective-mismatch",
                   me + " calls " + collectiveName(c.kinds[i]) + " over " + where + " where " + first + " calls " +
                       collectiveName(c.kind),
                   {note(c.at[0], first + " calls " + collectiveName(c.kind) + " here")});
  } else {
    reporter.error(
        c.at[i], "collective-mismatch",
        me + " calls " + collectiveName(c.kind) + " of layer " + std::to_string(c.inputs[i]->layer) + " over " + where +
            " where " + first + " calls it for layer " + std::to_string(c.layer),
        {note(c.at[0], first + "'s " + collectiveName(c.kind) + " of layer " + std::to_string(c.layer) + " is here")});
  }
}

// What this rank puts into a collective: `v`, or a poisoned copy (reported) where the
// collective does not take such a value. An all-reduce takes weight gradients (a
// tensor-parallel part's too) and tensor-parallel partial sums; a reduce-scatter weight
// gradients and partial sums (which it splits along the sequence); an all-gather weights'
// shards and activations' sequence shards. A tensor-parallel part's gradient is
// reduce-scattered into shards of the part, which all-gather back into it (the
// distributed optimizer: ZeRO over the data-parallel replicas of a part).
ValuePtr Rank::collectiveInput(SourceRange at, CollectiveKind kind, const ValuePtr &v) {
  if (v->poisoned)
    return v;
  bool activation = v->kind == Kind::Activation || v->kind == Kind::ActGrad;
  bool takes = false;
  const char *what = nullptr; // what it takes, for the error
  switch (kind) {
  case CollectiveKind::AllGather:
    takes = activation ? v->split == Split::Sequence : v->kind == Kind::Weight;
    what = "a weight's shards or an activation's sequence shards";
    break;
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter:
    takes = activation ? v->split == Split::PartialSum : v->kind == Kind::WeightGrad;
    what = "a weight gradient or a tensor-parallel partial sum";
    break;
  }
  if (takes)
    return v; // (the words of the error are put together only for one)
  error(at, "collective-value",
        std::string(collectiveName(kind)) + " takes " + what + ", but rank " + std::to_string(id_) + " has " +
            v->describe());
  Value poisoned = *v;
  poisoned.poisoned = true;
  return makeValue(std::move(poisoned));
}

ValuePtr Rank::collective(SourceRange at, CollectiveKind kind, const ValuePtr &v, SetPtr group) {
  const char *name = collectiveName(kind);
  if (cancelled()) // (stopped at an error in this statement: it joins nothing more)
    return poison(v->kind, v->layer);
  if (refusedInPair(at, name))
    return poison(v->kind, v->layer);
  if (group->empty() || group->min() < 0 || group->max() >= world_.model_.ranks) {
    errorWith(at, "group-range", [&] {
      return std::string(name) + " over ranks " + group->str() + ": there are " + std::to_string(world_.model_.ranks) +
             " ranks (0 to " + std::to_string(world_.model_.ranks - 1) + ")";
    });
    return poison(v->kind, v->layer);
  }
  if (!group->contains(id_)) {
    errorWith(at, "group-member", [&] {
      return "rank " + std::to_string(id_) + " calls " + name + " over ranks " + group->str() +
             ", a group it is not in";
    });
    return poison(v->kind, v->layer);
  }
  ValuePtr input = collectiveInput(at, kind, v);
  World::Group &g = world_.groupFor(*lane_, group);
  const auto &elems = g.members->elements();
  size_t pos = static_cast<size_t>(std::lower_bound(elems.begin(), elems.end(), id_) - elems.begin());
  // On several threads, a member finds its call under the group's lock, and fills its own
  // position of it without; the last to arrive completes it (it alone touches it then) and
  // wakes the rest, who read it completed.
  std::unique_lock<SpinLock> lock(g.lock, std::defer_lock);
  if (world_.parallel_)
    lock.lock();
  int32_t nodes = world_.nodesOf(g);
  uint64_t call = g.calls[pos]++;
  while (g.base + g.instances.size() <= call)
    g.instances.emplace_back(kind, elems.size());
  World::Collective &c = g.instances[call - g.base];
  if (lock)
    lock.unlock();
  c.kinds[pos] = kind;
  c.inputs[pos] = input;
  c.at[pos] = at;
  c.readyAt[pos] = clock_.ready(eventOf(kind), input->made);
  if (!world_.parallel_)
    c.arrivals.push_back(static_cast<uint32_t>(pos));
  uint32_t before = c.arrived.fetch_add(1, std::memory_order_acq_rel);
  if (before & World::Collective::kAbandoned) // a cancelled run's call, never to complete
    return poison(v->kind, v->layer);
  if (before + 1 == elems.size()) {
    for (const Number &ready : c.readyAt)
      c.ready.join(ready);
    World::matchCalls(c, *g.members, *this);
    World::combine(c, *g.members, *this, at);
    if (world_.parallel_)
      world_.handBack(c);
    c.done = true;
    world_.wakeMembers(c, elems, id_);
  } else if (!World::awaitCall(*this, c, static_cast<uint32_t>(elems.size()),
                               Wait{.at = at, .collective = &c, .kind = kind, .members = g.members})) {
    return poison(v->kind, v->layer);
  }
  cost::Work work{.kind = eventOf(kind),
                  .data = dataOf(v->kind),
                  .groupSize = static_cast<int32_t>(elems.size()),
                  .nodes = nodes,
                  .layer = v->layer,
                  .volume = v->memory().asDouble()};
  cost::Producers made = logEvent(work, nullptr, at, v->made, cost::AlsoWaits::call(c.ready.time()));
  if (world_.options_.recordTransfers)
    collectiveCalls_.push_back({figures_.events - 1, kind, v->kind, v->layer, g.members});
  Value mine = c.resultFor(pos, c.laneResults.empty() ? c.result : c.laneResults[lane_->index]);
  mine.made = made;
  ValuePtr result = makeValue(std::move(mine));
  if (c.taken.fetch_add(1, std::memory_order_acq_rel) + 1 == elems.size()) { // everyone has its result
    if (world_.parallel_)
      lock.lock();
    while (!g.instances.empty() && g.instances.front().taken.load(std::memory_order_acquire) == elems.size()) {
      g.instances.pop_front(); // retire finished instances
      ++g.base;
    }
  }
  return result;
}

bool Rank::canExchange(int64_t peer, int64_t tag) const {
  return peer >= 0 && peer < world_.model_.ranks && peer != id_ && tag >= 0 && tag <= kMaxTag;
}

// Reports an invalid peer or tag of a send (`sending`) or a receive; false if they are valid.
bool Rank::badRoute(SourceRange at, bool sending, int64_t peer, int64_t tag) {
  if (canExchange(peer, tag))
    return false;
  int64_t ranks = world_.model_.ranks;
  std::string why;
  if (peer == id_)
    why = "rank " + std::to_string(id_) + (sending ? " sends to itself" : " receives from itself");
  else if (peer < 0 || peer >= ranks)
    why = (sending ? "send to rank " : "receive from rank ") + std::to_string(peer) + ": there are " +
          std::to_string(ranks) + " ranks (0 to " + std::to_string(ranks - 1) + ")";
  else
    why = "tag " + std::to_string(tag) + " is out of range: tags are 0 to " + std::to_string(kMaxTag);
  error(at, sending ? "send-rank" : "recv-rank", why);
  return true;
}

void Rank::send(SourceRange at, int64_t to, const ValuePtr &v, int64_t tag) {
  if (canExchange(to, tag)) // a real backend sends whenever the route is valid (rt/Abi.cpp)
    (world_.parallel_ ? lane_->routes : world_.routes_).insert({id_, to});
  if (cancelled() || refusedInPair(at, "send") || badRoute(at, true, to, tag))
    return;
  int32_t flow = world_.flows_.fetch_add(1, std::memory_order_relaxed);
  const cost::CostModel &model = *world_.options_.costModel;
  int32_t nodes = model.placesRanksOnNodes() && model.nodeOf(id_) != model.nodeOf(to) ? 2 : 1;
  logEvent({.kind = EventKind::Pass, .data = dataOf(v->kind), .nodes = nodes, .volume = v->memory().asDouble()},
           nullptr, at, v->made, {}, flow);
  if (world_.options_.recordTransfers)
    transfers_.push_back({figures_.events - 1, to, true, v->kind, v->layer, v->batches});
  Rank &peer = *world_.ranks_[to];
  // A value for another thread is its own copy: the two threads count nothing in common.
  World::Message m{world_.parallel_ && peer.lane_ != lane_ ? detached(v) : v, at, flow, clock_.lastEnd(), tag};
  if (world_.options_.p2p == PointToPoint::Ordered)
    return sendOrdered(at, to, std::move(m));
  std::unique_lock<std::mutex> lock = world_.lockInbox(to);
  world_.inbox_[to][{id_, tag}].push_back(std::move(m));
  if (peer.awaiting_ == std::pair{id_, tag}) { // the receiver waits for this message
    peer.awaiting_ = {-1, 0};
    world_.schedule(peer);
  }
}

ValuePtr Rank::recv(SourceRange at, int64_t from, int64_t tag) {
  if (refusedInPair(at, "recv") || badRoute(at, false, from, tag))
    return poison(Kind::Activation);
  if (world_.options_.p2p == PointToPoint::Ordered)
    return recvOrdered(at, from, tag);
  // The sender adds to the queue and, where this rank says it waits for the message
  // (awaiting_), wakes it; on several threads, both under the inbox's lock.
  std::unique_lock<std::mutex> lock = world_.lockInbox(id_);
  std::deque<World::Message> &queue = world_.inbox_[id_][{from, tag}];
  auto ready = [&] {
    if (world_.parallel_ && !lock.owns_lock())
      lock.lock();
    if (!queue.empty())
      return true; // (still locked, to take the message)
    awaiting_ = {from, tag};
    if (lock.owns_lock())
      lock.unlock();
    return false;
  };
  if (!waitUntil(ready, Wait{.at = at, .peer = from, .tag = tag})) {
    // Cancelled: `ready` may have found the message (and kept the lock) or not (and let it
    // go). Taking it again while held would wait on this very thread forever.
    if (world_.parallel_ && !lock.owns_lock())
      lock.lock();
    awaiting_ = {-1, 0};
    return poison(Kind::Activation);
  }
  World::Message m = std::move(queue.front());
  queue.pop_front();
  if (lock.owns_lock())
    lock.unlock();
  cost::Producers made =
      logEvent({.kind = EventKind::Pass}, nullptr, at, {}, cost::AlsoWaits::message(m.sentEnd), m.flow);
  if (world_.options_.recordTransfers)
    transfers_.push_back({figures_.events - 1, from, false, m.value->kind, m.value->layer, m.value->batches});
  return madeBy(m.value, made);
}

} // namespace schedc::sim
