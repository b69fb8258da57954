// Collectives and point-to-point messages. A collective is a barrier over its group: the
// k-th collective a rank calls on a group meets the k-th call of every other member; all
// must agree on kind and layer (else an error names both places). When the last member
// arrives, every member logs the call's event, which waits for every member (so it starts
// when the last is ready; cost/Placement.h). `send` never waits; `recv` waits for the next
// message from its source, and its event waits for the send's. Messages are matched per
// (source, tag), first in first out; under ordered point-to-point, through the ranks'
// streams instead (engine/OrderedChannels.cpp).
#include "engine/World.h"

#include <algorithm>
#include <functional>

namespace schedc::sim {

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

// The member that arrived last runs first (each goes to the front): the last to run before
// the collective completed are the likeliest to be in cache still. Where every member waits
// in every round (ddp's all-reduces), rounds go back and forth over the ranks, not round and
// round (where each rank resumed is the one least recently run). On several threads, where
// arrivals are not listed, in the group's order, a lane's worth handed over at a time.
void World::completeCall(Rank &last, Collective &c, const SetPtr &members, SourceRange at) {
  for (const Number &ready : c.readyAt)
    c.ready.join(ready);
  auto report = [&last](SourceRange where, const char *code, std::string message, std::vector<Diagnostic> notes) {
    last.error(where, code, std::move(message), std::move(notes));
  };
  matchCalls(c, *members, model_.ranks, report);
  combine(c, *members, model_.ranks,
          [&](const char *code, const Words &message) { last.errorWith(at, code, message); });
  if (parallel_)
    handBack(c);
  c.done = true;
  wakeMembers(c, members->elements(), last.id());
}

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

// What this rank puts into a collective: `v`, or a poisoned copy (reported) where the
// collective does not take such a value (sim::takes).
ValuePtr Rank::collectiveInput(SourceRange at, CollectiveKind kind, const ValuePtr &v) {
  if (v->poisoned)
    return v;
  if (!checkOnDevice(
          at, [&] { return std::string(collectiveName(kind)); }, *v))
    return refusedCopy(*v);
  if (takes(kind, *v))
    return v; // (the words of the error are put together only for one)
  error(at, "collective-value",
        std::string(collectiveName(kind)) + " takes " + whatItTakes(kind) + ", but rank " + std::to_string(id_) +
            " has " + v->describe());
  return refusedCopy(*v);
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
  // In a `group`: one that cannot join its call still joins the collective, with a poisoned
  // copy, as one whose value it does not take (the other members are not left waiting).
  const InCall inCall = coalescedWith(at, kind, group);
  ValuePtr input = inCall == InCall::Refused ? refusedCopy(*v) : collectiveInput(at, kind, v);
  if (madeByOpenCall(*input))
    input = joinedApartFromCall(at, *input);
  if (input->kind == Kind::WeightGrad) {
    if (!lastGradientCollective_)
      lastGradientCollective_ = std::make_unique<GradientCollective>();
    *lastGradientCollective_ = {input->layer, kind, at, group};
  }
  World::Group &g = world_.groups_.find(lane_->recentGroups, group, world_.parallel_);
  const auto &elems = g.members->elements();
  size_t pos = static_cast<size_t>(std::lower_bound(elems.begin(), elems.end(), id_) - elems.begin());
  // On several threads, a member finds its call under the group's lock, and fills its own
  // position of it without; the last to arrive completes it (it alone touches it then) and
  // wakes the rest, who read it completed.
  std::unique_lock<SpinLock> lock(g.lock, std::defer_lock);
  if (world_.parallel_)
    lock.lock();
  int32_t nodes = CollectiveGroups::nodesOf(g, *world_.options_.costModel);
  uint64_t call = g.calls[pos]++;
  while (g.base + g.instances.size() <= call)
    g.instances.emplace_back(kind, elems.size());
  World::Collective &c = g.instances[call - g.base];
  if (lock)
    lock.unlock();
  c.kinds[pos] = kind;
  c.inputs[pos] = input;
  c.at[pos] = at;
  c.coalesced[pos] = inCall == InCall::Continues;
  c.readyAt[pos] = clock_.ready(eventOf(kind), input->made);
  if (!world_.parallel_)
    c.arrivals.push_back(static_cast<uint32_t>(pos));
  uint32_t before = c.arrived.fetch_add(1, std::memory_order_acq_rel);
  if (before & World::Collective::kAbandoned) // a cancelled run's call, never to complete
    return poison(v->kind, v->layer);
  if (before + 1 == elems.size()) {
    world_.completeCall(*this, c, g.members, at);
  } else if (!World::awaitCall(*this, c, static_cast<uint32_t>(elems.size()),
                               Wait{.at = at, .collective = &c, .kind = kind, .members = g.members})) {
    return poison(v->kind, v->layer);
  }
  // The layer the event is of: a combine of the experts' output (an activation of layer l + 1
  // until it is back) is layer l's.
  const int64_t layer = v->split == Split::ExpertOutput && v->kind == Kind::Activation ? v->layer - 1 : v->layer;
  cost::Work work{.kind = eventOf(kind),
                  .data = dataOf(v->kind),
                  .embeddingCopy = v->embeddingCopy,
                  .half = halfOf(*v),
                  .tokenCopies = isTokens(v->split) || kind == CollectiveKind::AllToAll,
                  .groupSize = static_cast<int32_t>(elems.size()),
                  .nodes = nodes,
                  .layer = layer,
                  .volume = v->memory().asDouble()};
  cost::Producers made = logEvent(work, nullptr, at, input->made, cost::AlsoWaits::call(c.ready.time()));
  const int32_t event =
      made.latest[static_cast<size_t>(cost::streamOfClass(work.kind))]; // (placed or in the open call)
  if (world_.options_.recordTransfers)
    records_.collectiveCalls.push_back({static_cast<size_t>(event), kind, v->kind, layer, g.members});
  Value mine = c.resultFor(pos, c.laneResults.empty() ? c.result : c.laneResults[lane_->index], *input);
  mine.made = made;
  ValuePtr result = makeValue(std::move(mine));
  if (CoalescedCall *call = openCall())
    call->operands.emplace_back(v.get(), event);
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

Rank::InCall Rank::coalescedWith(SourceRange at, CollectiveKind kind, const SetPtr &members) {
  if (!inGroup_)
    return InCall::Alone;
  if (!openCall()) {
    if (!coalescedCall_)
      coalescedCall_ = std::make_unique<CoalescedCall>();
    CoalescedCall &call = *coalescedCall_;
    call.open = true;
    call.kind = kind;
    call.members = members;
    call.at = at;
    return InCall::Alone;
  }
  const CoalescedCall &first = *coalescedCall_;
  if (first.kind == kind && *first.members == *members)
    return InCall::Continues;
  error(at, "group-collectives",
        "a `group`'s collectives are one coalesced call (NCCL's group, DDP's bucket): " +
            std::string(collectiveName(kind)) + " over " + groupName(*members, world_.model_.ranks) +
            " cannot join its " + collectiveName(first.kind) + " over " +
            groupName(*first.members, world_.model_.ranks) + "; give it a group of its own",
        {note(first.at, "the group's first collective is here")});
  return InCall::Refused;
}

bool Rank::madeByOpenCall(const Value &input) const {
  if (!openCall())
    return false;
  for (int32_t maker : input.made.latest)
    if (maker >= 0 && static_cast<uint64_t>(maker) >= figures_.events) // an event of the open call
      return true;
  return false;
}

ValuePtr Rank::joinedApartFromCall(SourceRange at, const Value &input) {
  if (!input.poisoned)
    error(at, "group-collectives",
          std::string("a `group`'s collectives are one coalesced call, computed at once: this one cannot take ") +
              input.describe() + ", which the call makes; put it after the group",
          {note(openCall()->at, "the group's first collective is here")});
  Value copy = input;
  copy.poisoned = true;
  copy.made = {}; // (the call's events are not placed yet)
  return makeValue(std::move(copy));
}

void Rank::checkStoreOverOperand(SourceRange at, const Value &replaced, const Value *stored, uint32_t array,
                                 const SlotIndex &index) {
  const CoalescedCall &call = *openCall();
  auto madeBy = [&](int32_t event) {
    return std::find(stored->made.latest.begin(), stored->made.latest.end(), event) != stored->made.latest.end();
  };
  for (const auto &[operand, event] : call.operands)
    if (operand == &replaced && !madeBy(event)) {
      error(at, "group-collectives",
            "`" + slotName(array, index) +
                "` holds an operand of the group's coalesced call, which reads it until the call ends, after the "
                "group: store over it after the group (a collective's own result may replace its operand)",
            {note(call.at, "the group's first collective is here")});
      return;
    }
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
    (world_.parallel_ ? lane_->routes : world_.mail_.routes()).insert({id_, to});
  if (cancelled() || refusedInPair(at, "send") || badRoute(at, true, to, tag))
    return;
  // A value off the device is refused, and still sent (poisoned): the receiver waits for it.
  ValuePtr sent = checkOnDevice(
                      at, [&] { return "send to rank " + std::to_string(to); }, *v)
                      ? v
                      : refusedCopy(*v);
  int32_t flow = world_.mail_.newFlow();
  const cost::CostModel &model = *world_.options_.costModel;
  int32_t nodes = model.placesRanksOnNodes() && model.nodeOf(id_) != model.nodeOf(to) ? 2 : 1;
  logEvent({.kind = EventKind::Pass,
            .data = dataOf(v->kind),
            .half = halfOf(*v),
            .tokenCopies = isTokens(v->split),
            .nodes = nodes,
            .volume = v->memory().asDouble()},
           nullptr, at, v->made, {}, flow);
  if (world_.options_.recordTransfers)
    records_.transfers.push_back({figures_.events - 1, to, true, v->kind, v->layer, v->batches});
  Rank &peer = *world_.ranks_[to];
  // A value for another thread is its own copy: the two threads count nothing in common.
  World::Message m{world_.parallel_ && peer.lane_ != lane_ ? detached(sent) : sent, at, flow, clock_.lastEnd(), tag};
  if (world_.options_.p2p == PointToPoint::Ordered)
    return sendOrdered(at, to, std::move(m));
  std::unique_lock<std::mutex> lock = world_.mail_.lock(to, world_.parallel_);
  world_.mail_.queue(to, id_, tag).push_back(std::move(m));
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
  std::unique_lock<std::mutex> lock = world_.mail_.lock(id_, world_.parallel_);
  std::deque<World::Message> &queue = world_.mail_.queue(id_, from, tag);
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
    records_.transfers.push_back({figures_.events - 1, from, false, m.value->kind, m.value->layer, m.value->batches});
  return madeBy(m.value, made);
}

} // namespace schedc::sim
