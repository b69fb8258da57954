// Rank's events: logging one (placed in time by the rank's clock as it is logged), keeping
// it for a trace or a timeline, counting it in the rank's figures, and the copies of values
// that carry the events that made them. Every operation of engine/Operations.cpp and
// engine/Communication.cpp logs through here.
#include "engine/World.h"

#include "memory/HugePages.h"

namespace schedc::sim {

static_assert(sizeof(void *) != 8 || sizeof(Event) <= 128,
              "an event outgrew 128 bytes: a chunk of 32 no longer fits jemalloc's 4 KiB class");

cost::Producers Rank::logEvent(const cost::Work &work, SetPtr batches, SourceRange at, cost::Producers after,
                               const cost::AlsoWaits &also, int32_t flow) {
  auto index = static_cast<int64_t>(figures_.events);
  if (pair_) { // placed with the rest of the pair when it closes
    index += static_cast<int64_t>(pair_->events.size());
    pair_->events.push_back(
        {{work, after, pair_->second}, std::move(batches), lane_->sites.intern(at), flow, heldNow()});
    return cost::Producers::of(cost::streamOfClass(work.kind), index);
  }
  if (CoalescedCall *call = openCall()) { // a `group`'s collective: placed with the rest of its call at its end
    SCHEDC_ASSERT(collectiveOf(work.kind), "an event other than a collective in a group's call (sema refuses it)");
    index += static_cast<int64_t>(call->events.size());
    call->events.push(work, after, also.time);
    call->sites.push_back(lane_->sites.intern(at));
    call->held.push_back(heldNow());
    return cost::Producers::of(cost::streamOfClass(work.kind), index);
  }
  cost::Placed placed = clock_.place(work, after, also);
  HeldSample held = heldNow();
  addToFigures(work, placed, held);
  keepEvent(work, placed, held, std::move(batches), lane_->sites.intern(at), flow);
  memory::useHugePagesOnceLarge();
  return cost::Producers::of(cost::streamOfClass(work.kind), index);
}

void Rank::closeCall() {
  CoalescedCall *call = openCall();
  if (!call)
    return;
  call->open = false;
  call->members.reset();
  call->operands.clear();
  if (call->events.size() == 0) // (its collectives stopped before logging: a cancelled run)
    return;
  const std::vector<cost::Placed> &placed = clock_.placeCall(call->events, call->scratch);
  for (size_t i = 0; i < placed.size(); ++i) {
    addToFigures(call->events.works[i], placed[i], call->held[i]);
    keepEvent(call->events.works[i], placed[i], call->held[i], nullptr, call->sites[i], -1);
  }
  call->events.clear();
  call->sites.clear();
  call->held.clear();
}

HeldSample Rank::heldNow() const {
  return {storage_.memory(),
          storage_.bytes(),
          storage_.shares(),
          storage_.microBatchesInFlight(),
          storage_.activationMemory(),
          measure_ ? storage_.payloadBytes() : std::array<int64_t, kTiers>{-1, -1, -1},
          storage_.tierBytes(Tier::Host),
          storage_.tierBytes(Tier::Nvme)};
}

void Rank::keepEvent(const cost::Work &work, const cost::Placed &placed, const HeldSample &held, SetPtr batches,
                     Sites::Id site, int32_t flow) {
  if (world_.options_.keepEvents) {
    Event &e = events_.emplace_back();
    static_cast<cost::Work &>(e) = work;
    static_cast<cost::Placed &>(e) = placed;
    e.batches = std::move(batches);
    e.memory = held.memory;
    e.bytes = held.bytes;
    e.site = site;
    e.flow = flow;
  }
  if (measure_) {
    SCHEDC_ASSERT(measured_.size() + 1 == figures_.events, "payloads measured from a rank's first event only");
    measured_.emplace_back() = held.payloadBytes[static_cast<size_t>(Tier::Device)];
    for (Tier t : {Tier::Host, Tier::Nvme})
      measuredTierPeak_[static_cast<size_t>(t)] =
          std::max(measuredTierPeak_[static_cast<size_t>(t)], held.payloadBytes[static_cast<size_t>(t)]);
  }
}

// In the order the report's figures are defined (World::report): sums in event order, the
// first strictly largest memory sample.
void Rank::addToFigures(const cost::Work &work, const cost::Placed &placed, const HeldSample &held) {
  RankFigures &f = figures_;
  ++f.events;
  Number end = placed.start + placed.length;
  if (isComputeEvent(work.kind)) {
    f.computeTime += placed.length.asDouble();
    f.computeStart = std::min(f.computeStart, placed.start.asDouble());
    f.computeEnd = std::max(f.computeEnd, end.asDouble());
  }
  const cost::CostModel &model = *world_.options_.costModel;
  if (isCommunicationEvent(work.kind)) {
    f.communicationVolume += work.volume;
    f.communicationBytes += model.communicationBytes(work);
  }
  f.flops += model.flops(work);
  f.busy[static_cast<size_t>(model.stream(work.kind))] += placed.length.asDouble();
  f.modelFlops += model.modelFlops(work);
  if (held.memory > f.peakMemory) {
    f.peakMemory = held.memory;
    f.peakTime = placed.start;
  }
  f.lastStart = placed.start;
  f.end = end;
  if (held.bytes > f.peakBytes) {
    f.peakBytes = held.bytes;
    f.peakShares = held.shares;
  }
  f.peakHostBytes = std::max(f.peakHostBytes, held.hostBytes);
  f.peakNvmeBytes = std::max(f.peakNvmeBytes, held.nvmeBytes);
  if (recompute_)
    recompute_->sampled(f.events - 1, held.bytes);
  f.peakInFlight = std::max(f.peakInFlight, held.inFlight);
  f.peakActivationMemory = std::max(f.peakActivationMemory, held.activationMemory);
}

ValuePtr Rank::madeBy(const ValuePtr &v, cost::Producers made) const {
  Value copy = *v; // keeps its memory
  copy.made = made;
  return ValuePtr(new Value(std::move(copy)));
}

ValuePtr Rank::detached(const ValuePtr &v) const {
  SCHEDC_ASSERT(!v->payload, "a backend's value on a thread of a parallel run");
  Value copy = *v; // keeps its memory
  for (SetPtr *set : {&copy.shards, &copy.batches})
    if (*set && (*set)->counting() == IntSet::Counting::OneThread)
      *set = makeSet(**set);
  return ValuePtr(new Value(std::move(copy)));
}

} // namespace schedc::sim
