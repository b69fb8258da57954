// Rank's storage: storing, reading, holding and freeing a slot's value (sim/Storage.h keeps
// them), each checked (a slot read or freed empty is an error that says why), and the bytes
// of inputs a backward recomputes (sim/Recompute.h).
#include "engine/World.h"

namespace schedc::sim {

std::string Rank::slotName(uint32_t array, const SlotIndex &index) const {
  std::string s = world_.arrays_[array].name + "[";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

void Rank::store(uint32_t array, const SlotIndex &index, ValuePtr v, SourceRange at) {
  if (cancelled())
    return;
  // The first store names the kind (on several threads, one wins and the others compare).
  int8_t known = world_.arrayKinds_[array].load(std::memory_order_relaxed);
  if (known == World::kNoKind)
    world_.arrayKinds_[array].compare_exchange_strong(known, static_cast<int8_t>(v->kind), std::memory_order_relaxed);
  if (known != World::kNoKind && known != static_cast<int8_t>(v->kind) && !v->poisoned) {
    Kind kind = static_cast<Kind>(known);
    errorWith(at, "store-kind", [&] {
      return "storing " + v->describe() + " in `" + world_.arrays_[array].name + "`, which holds " + kindPlural(kind);
    });
    v = poison(kind, v->layer);
  }
  if (pair_)
    touchInPair(array, index, true, at);
  if (reportedEmpty_ && !reportedEmpty_->empty()) // filled again: a later mistake there is a new one
    reportedEmpty_->erase({array, std::vector<int64_t>(index.begin(), index.end())});
  const Value *stored = v.get();
  ValuePtr replaced = storage_.store(array, indexSpan(index), std::move(v), lane_->sites.intern(at));
  if (replaced && openCall())
    checkStoreOverOperand(at, *replaced, stored, array, index);
  if (recompute_) { // the replaced value first: it may be the one stored again
    if (replaced)
      recompute_->dropped(replaced.get());
    if (stored->kind == Kind::Activation && !pair_)
      recompute_->stored(stored, eventsLogged());
  }
}

void Rank::readsInput(const ValuePtr &a, bool backward, SourceRange at) {
  if (!recompute_ || pair_ || a->kind != Kind::Activation)
    return;
  if (backward) {
    recompute_->backwardReads(a.get(), figures_.events);
    return;
  }
  bool again = recompute_->forwardReads(a.get(), figures_.events,
                                        storage_.heldBytes(*a) - world_.options_.bytes.tensorBytes(*a));
  const cost::Transformer &model = *world_.options_.bytes.transformer;
  if (!again || model.recompute == cost::Recompute::None || warnedRecomputeTwice_)
    return;
  warnedRecomputeTwice_ = true;
  const bool full = model.recompute == cost::Recompute::Full;
  warning(at, "recomputed-twice",
          "this forward runs layer " + std::to_string(a->layer) +
              " again on its checkpoint (the schedule recomputes), and the model's recompute = " +
              cost::recomputeName(model.recompute) + " makes " + (full ? "every layer's forward" : "attention's core") +
              " again inside every backward too: the step counts " + (full ? "the forward" : "that core") +
              " twice; keep one: --model-set=recompute=none, or the schedule without its own recomputation");
}

void Rank::settleRecomputedBytes() {
  if (!recompute_ || !recompute_->anyRecomputed())
    return;
  std::vector<double> settled = recompute_->settledSamples();
  figures_.peakBytes = 0;
  for (double b : settled)
    figures_.peakBytes = std::max(figures_.peakBytes, b);
  // The difference taken off was activations' (checkpoints that kept their tensor alone):
  // the breakdown keeps the first pass's other shares and gives activations the rest.
  ByteShares &shares = figures_.peakShares;
  double others = figures_.peakBytes;
  for (int i = 0; i < kByteShares; ++i)
    if (static_cast<ByteShare>(i) != ByteShare::Activations)
      others -= shares[static_cast<size_t>(i)];
  shares[static_cast<size_t>(ByteShare::Activations)] = std::max(0.0, others);
  if (world_.options_.keepEvents)
    for (size_t i = 0; i < settled.size() && i < events_.size(); ++i)
      events_[i].bytes = settled[i];
}

bool Rank::holds(uint32_t array, const SlotIndex &index) const {
  return storage_.find(array, indexSpan(index)) != nullptr;
}

ValuePtr Rank::read(uint32_t array, const SlotIndex &index, SourceRange at) {
  if (pair_)
    touchInPair(array, index, false, at);
  if (const Value *v = storage_.find(array, indexSpan(index)))
    return ValuePtr(v);
  reportEmptySlot(array, index, at, false);
  int8_t known = world_.arrayKinds_[array].load(std::memory_order_relaxed);
  return poison(known == World::kNoKind ? Kind::Activation : static_cast<Kind>(known));
}

void Rank::reportEmptySlot(uint32_t array, const SlotIndex &index, SourceRange at, bool freeing) {
  if (!reportedEmpty_)
    reportedEmpty_ = std::make_unique<std::set<std::pair<uint32_t, std::vector<int64_t>>>>();
  if (!reportedEmpty_->emplace(array, std::vector<int64_t>(index.begin(), index.end())).second)
    return; // said already
  std::optional<Sites::Id> freed = storage_.freedAt(array, indexSpan(index));
  if (freeing && freed)
    error(at, "double-free", "`" + slotName(array, index) + "` is freed twice on rank " + std::to_string(id_),
          {note(world_.site(*freed), "it is first freed here")});
  else if (freeing)
    error(at, "free-unassigned",
          "`" + slotName(array, index) + "` is freed but never assigned on rank " + std::to_string(id_));
  else if (freed)
    error(at, "read-freed",
          "`" + slotName(array, index) + "` is used after it was freed on rank " + std::to_string(id_),
          {note(world_.site(*freed), "it is freed here")});
  else
    error(at, "read-unassigned",
          "`" + slotName(array, index) + "` is used but never assigned on rank " + std::to_string(id_));
}

void Rank::free(uint32_t array, const SlotIndex &index, SourceRange at) {
  if (cancelled())
    return;
  if (pair_)
    touchInPair(array, index, true, at);
  if (ValuePtr freed = storage_.erase(array, indexSpan(index), lane_->sites.intern(at))) {
    if (recompute_)
      recompute_->dropped(freed.get());
    if (world_.options_.recordTransfers && freed->kind == Kind::Weight)
      records_.weightsFreed.push_back({figures_.events, freed->layer, freed->complete()});
    return;
  }
  reportEmptySlot(array, index, at, true);
}

} // namespace schedc::sim
