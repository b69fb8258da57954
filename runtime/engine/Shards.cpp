// `shard` of a value: a rank's shard of a whole weight, optimizer state or gradient (ZeRO),
// a finer slice of a tensor-parallel part (the distributed optimizer), or an activation's
// shard along the sequence (sequence parallelism before a layer's forward; a partitioned
// checkpoint after it, which only full recomputation makes the layer's whole keep); and the
// sequence-parallel mode each layer runs in (its forward's, which its backward follows).
#include "engine/World.h"

namespace schedc::sim {

bool Rank::keepsOnlyItsInput(const Value &activation) const {
  // (recompute_ exists under a transformer byte model, the one whose activations carry more
  // than their tensor; it knows which stored inputs a forward has read.)
  const bool readWhole = recompute_ && activation.kind == Kind::Activation && recompute_->forwarded(&activation);
  return !readWhole || world_.options_.bytes.transformer->recompute == cost::Recompute::Full;
}

bool Rank::sequenceParallelIn(int64_t layer, const Value &input, bool forward) {
  if (layer < 0 || layer >= world_.model_.layers) // (an error checkLayer reports)
    return input.sequenceGathered;
  const size_t at = static_cast<size_t>(layer);
  if (forward) {
    if (forwardSequence_.size() <= at)
      forwardSequence_.resize(at + 1, -1);
    forwardSequence_[at] = input.sequenceGathered ? 1 : 0;
    return input.sequenceGathered;
  }
  return at < forwardSequence_.size() && forwardSequence_[at] >= 0 ? forwardSequence_[at] == 1 : input.sequenceGathered;
}

ValuePtr Rank::shard(SourceRange at, const ValuePtr &v, int64_t shard, int64_t of) {
  bool ok = true;
  // An activation (or its gradient) is split along the sequence (sequence parallelism).
  bool activation = v->kind == Kind::Activation || v->kind == Kind::ActGrad;
  if (!v->poisoned) {
    std::string what = std::string(kindName(v->kind)) + " of " + layerOf(v->layer);
    if (of < 1) {
      error(at, "shard-count",
            "`shard` of the " + what + " into " + std::to_string(of) +
                " shards: the number of shards must be at least 1");
      ok = false;
    } else if (shard < 0 || shard >= of) {
      error(at, "shard-count",
            "`shard` " + std::to_string(shard) + " of " + std::to_string(of) + " of the " + what +
                ": shards are numbered 0 to " + std::to_string(of - 1));
      ok = false;
    } else if (activation && v->split != Split::None) {
      error(at, "shard-partial",
            "`shard` of the " + what + " needs the whole value, but rank " + std::to_string(id_) + " has " +
                v->describe());
      ok = false;
    } else if (activation && !keepsOnlyItsInput(*v)) {
      error(at, "shard-saved",
            "`shard` of the activations entering " + layerOf(v->layer) + " on rank " + std::to_string(id_) +
                ", which a forward has read whole: a partitioned checkpoint keeps a share of the layer's input, "
                "which is all the layer keeps for its backward only under the model's full recomputation, and "
                "this model keeps more; give it recompute = \"full\" (--model-set=recompute=full; a schedule "
                "that runs the forward again itself from the gathered shards is not counted so), or shard before "
                "the forward (sequence parallelism)");
      ok = false;
    } else if (!activation && isSlice(v->split) && singleSlice(*v->shards, v->total).first < 0) {
      error(at, "shard-partial",
            "`shard` of the " + what + " needs one whole " +
                (v->split == Split::Part ? "tensor-parallel part" : "slice of the routed experts") + ", but rank " +
                std::to_string(id_) + " has " + v->describe());
      ok = false;
    } else if (!activation && !isSlice(v->split) && !v->complete()) {
      error(at, "shard-partial",
            "`shard` of the " + what + " needs the complete value, but rank " + std::to_string(id_) +
                " holds only shards " + v->shards->str() + " of " + std::to_string(v->total));
      ok = false;
    }
  }
  Value s = *v;
  // A tensor-parallel part's shard (the distributed optimizer) is a finer part: slice
  // p·of + shard of total·of.
  auto [part, parts] =
      !activation && isSlice(v->split) && ok ? singleSlice(*v->shards, v->total) : std::pair<int64_t, int64_t>{0, 1};
  s.shards = singleSet(ok ? part * of + shard : 0);
  s.total = ok ? parts * of : 1;
  if (activation && ok)
    s.split = Split::Sequence;
  s.poisoned = !ok || v->poisoned;
  s.payload.reset();
  return makeValue(std::move(s));
}

} // namespace schedc::sim
