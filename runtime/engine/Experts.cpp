// Rank operations of a mixture-of-experts layer split around its all-to-alls
// (docs/language.md, "Experts"): the dense part's and the experts' loads, and each side's
// forward and backward. A layer l whose experts run on several ranks goes
//   x (whole) --forward, dense part--> at the router (Routed, layer l)
//     --alltoall--> at the experts (Dispatched, layer l)
//     --forward, experts' slice--> the experts' output (ExpertOutput, layer l + 1)
//     --alltoall--> the layer's output (whole, layer l + 1)
// and back the mirror way: the output's gradient (whole, layer l) --alltoall--> at the
// experts (ExpertOutput) --backward, experts--> their input's gradient (Dispatched, layer l)
// plus the experts' weight gradient --alltoall--> at the router (Routed) --backward, dense
// part--> the input's gradient (whole, layer l - 1) plus the dense part's weight gradient.
// Invariants: each side checks that its input is on its side of the all-to-all and its
// weight the side's own; the experts' side that its slice is the one the dispatch routed
// its tokens to. The experts' weight gradient holds the dispatch group's micro-batches, so
// an update sees every micro-batch only once it is summed over the ranks holding the same
// slice in the other groups (the experts' own data-parallel group).
#include "engine/World.h"

namespace schedc::sim {

namespace {

// "the experts' side of layer 3": how messages name a side.
std::string sideOf(cost::LayerHalf half, int64_t layer) {
  return std::string(half == cost::LayerHalf::Dense ? "the dense part" : "the experts") + " of " + layerOf(layer);
}

} // namespace

cost::LayerHalf halfOf(const Value &weight) {
  return weight.split == Split::Dense     ? cost::LayerHalf::Dense
         : weight.split == Split::Experts ? cost::LayerHalf::Experts
                                          : cost::LayerHalf::Whole;
}

bool Rank::checkExpertsLoad(SourceRange at, int64_t layer, bool sharded, bool tensor, int64_t expert, int64_t experts) {
  auto refuse = [&](const std::string &why) {
    error(at, "load-experts", "load of " + layerOf(layer) + ": " + why);
    return false;
  };
  if (tensor)
    return refuse("a weight is split into tensor-parallel parts (`part`, `parts`) or among experts (`expert`, "
                  "`experts`), not both");
  if (experts == -1)
    return refuse("`expert = " + std::to_string(expert) +
                  "` needs `experts`, the number of slices the routed experts are split into (the "
                  "expert-parallel group's size), or `experts = 0` for the layer without them");
  if (experts < 0)
    return refuse("`experts = " + std::to_string(experts) +
                  "`: the routed experts are split into 1 or more slices, or 0 for the layer without them");
  if (experts == 0 && expert != -1)
    return refuse("`experts = 0` loads the layer without its routed experts; `expert = " + std::to_string(expert) +
                  "` names no slice of it");
  if (experts > 0 && (expert < 0 || expert >= experts))
    return refuse("the routed experts' slices are numbered 0 to " + std::to_string(experts - 1) + ", not " +
                  std::to_string(expert) + (expert == -1 ? " (give `expert`)" : ""));
  if (experts > 0 && sharded)
    return refuse("ZeRO shards (`shard`, `of`) of an experts' slice are taken with `shard(...)` after the load");
  if (const auto &model = world_.options_.bytes.transformer; model && experts > 0 && model->experts % experts != 0)
    return refuse("the " + std::to_string(model->experts) + " routed experts of " + model->name +
                  " do not split into " + std::to_string(experts) +
                  " equal slices of whole experts: give `experts` a divisor of " + std::to_string(model->experts));
  if (const ByteModel &bytes = world_.options_.bytes;
      !bytes.transformer && experts > 0 && bytes.experts > 0 && bytes.experts % experts != 0)
    return refuse("the " + std::to_string(bytes.experts) + " experts of --experts do not split into " +
                  std::to_string(experts) + " equal slices of whole experts: give `experts` a divisor of " +
                  std::to_string(bytes.experts) + ", or --experts a multiple of " + std::to_string(experts));
  if (!world_.options_.costModel->modelsExperts())
    return refuse("the hardware cost model's layers have no routed experts (" +
                  std::string(world_.options_.bytes.transformer ? "the model " + world_.options_.bytes.transformer->name
                                                                : "the real backends' tanh(xW1)W2 layer") +
                  "); give a mixture-of-experts model, or check it under the puzzle cost model");
  if (const auto &model = world_.options_.bytes.transformer; model && !model->moeLayer(layer))
    return refuse("layer " + std::to_string(layer) + " of " + model->name + " has no routed experts (its first " +
                  std::to_string(model->denseLayers) + " layers are dense): load it whole");
  return true;
}

ValuePtr Rank::forwardHalf(SourceRange at, int64_t layer, const ValuePtr &a, const ValuePtr &w) {
  const cost::LayerHalf half = halfOf(*w);
  const bool experts = half == cost::LayerHalf::Experts;
  readsInput(a, false, at);
  cost::Producers made = logEvent({.kind = EventKind::Forward,
                                   .half = half,
                                   .groupSize = experts ? static_cast<int32_t>(a->total) : 0,
                                   .layer = layer,
                                   .microBatches = static_cast<int64_t>(a->batches->size())},
                                  a->batches, at, merge(a->made, w->made));
  bool ok = checkLayer(at, "forward", layer);
  if (ok && !a->poisoned && !w->poisoned)
    ok = checkHalfInputs(at, "forward", layer, *a, nullptr, *w);
  Value out = *a;
  out.kind = Kind::Activation;
  out.split = experts ? Split::ExpertOutput : Split::Routed;
  out.layer = experts ? layer + 1 : layer;
  out.payload.reset();
  out.poisoned = !ok || a->poisoned || w->poisoned;
  out.forged = a->forged;
  out.made = made;
  return makeValue(std::move(out));
}

std::pair<ValuePtr, ValuePtr> Rank::backwardHalf(SourceRange at, int64_t layer, const ValuePtr &a, const ValuePtr &g,
                                                 const ValuePtr &w, BackwardPart part) {
  const cost::LayerHalf half = halfOf(*w);
  const bool experts = half == cost::LayerHalf::Experts;
  EventKind kind = backwardEvent(part);
  const char *name = eventName(kind);
  readsInput(a, true, at);
  cost::Producers made = logEvent({.kind = kind,
                                   .half = half,
                                   .groupSize = experts ? static_cast<int32_t>(a->total) : 0,
                                   .layer = layer,
                                   .microBatches = static_cast<int64_t>(a->batches->size())},
                                  a->batches, at, merge(merge(a->made, g->made), w->made));
  bool ok = checkLayer(at, name, layer);
  if (ok && !a->poisoned && !g->poisoned && !w->poisoned)
    ok = checkHalfInputs(at, name, layer, *a, g.get(), *w);
  const bool poisoned = !ok || a->poisoned || g->poisoned || w->poisoned;
  Value gw;
  gw.kind = Kind::WeightGrad;
  gw.layer = layer;
  gw.split = w->split;
  gw.embeddingCopy = w->embeddingCopy; // (the dense part's: a tied embedding's copy)
  gw.batches = a->batches;             // the experts': the dispatch group's micro-batches
  gw.shards = experts ? w->shards : singleSet(0);
  gw.total = experts ? w->total : 1;
  gw.forged = g->forged;
  gw.poisoned = poisoned;
  gw.made = made;
  Value ga = *a; // the experts' input's gradient is dispatched as their input was
  ga.kind = Kind::ActGrad;
  ga.payload.reset();
  if (!experts) { // the dense part's input's gradient: whole, of the layer before
    ga.split = Split::None;
    ga.layer = layer - 1;
    ga.shards = emptySet();
    ga.total = 1;
    ga.step = 0;
  }
  ga.forged = g->forged;
  ga.poisoned = poisoned;
  ga.made = made;
  return {makeValue(std::move(gw)), makeValue(std::move(ga))};
}

// The dense part takes the whole input entering the layer (and in the backward the gradient at
// its router); the experts take the tokens dispatched to them (and the gradient of their
// output, dispatched the same way), with the slice those tokens were routed to.
bool Rank::checkHalfInputs(SourceRange at, const char *op, int64_t layer, const Value &a, const Value *g,
                           const Value &w) {
  const cost::LayerHalf half = halfOf(w);
  const bool experts = half == cost::LayerHalf::Experts;
  const std::string side = std::string(op) + " of " + sideOf(half, layer);
  auto user = [&] { return side; };
  if (!checkOnDevice(at, user, a) || (g && !checkOnDevice(at, user, *g)) || !checkOnDevice(at, user, w))
    return false;
  if (w.layer != layer) {
    errorWith(at, "weight-layer", [&] { return side + " uses the weight of " + layerOf(w.layer); });
    return false;
  }
  if (!experts && !w.complete()) {
    errorWith(at, "weight-sharded", [&] {
      return side + " needs its complete weight, but rank " + std::to_string(id_) + " holds only " + w.slices() +
             " (all-gather the weight first)";
    });
    return false;
  }
  const auto [slice, slices] = singleSlice(*w.shards, w.total);
  if (experts && slice < 0) {
    errorWith(at, "weight-sharded", [&] {
      return side + " needs one whole slice of them, but rank " + std::to_string(id_) + " holds " + w.slices() +
             " (all-gather the slice first)";
    });
    return false;
  }
  const Split wanted = experts ? Split::Dispatched : Split::None;
  if (a.kind != Kind::Activation || a.split != wanted || a.layer != layer) {
    errorWith(at, experts ? "expert-input" : "input-layer", [&] {
      return side + " takes " +
             (experts ? "the tokens dispatched to them (the router's output sent with alltoall over the "
                        "expert-parallel group)"
                      : "the activations entering " + layerOf(layer)) +
             ", but this is " + a.describe() + (experts && a.split == Split::Routed ? ": dispatch it first" : "");
    });
    return false;
  }
  if (experts && (slices != a.total || slice != a.step)) {
    errorWith(at, "expert-slice", [&] {
      return side + " with " + w.slices() + " computes the tokens routed to slice " + std::to_string(a.step) + " of " +
             std::to_string(a.total) + " (this rank's place in the dispatch group): load slice " +
             std::to_string(a.step) + " of " + std::to_string(a.total) + " here";
    });
    return false;
  }
  if (!g)
    return true;
  const Split gradWanted = experts ? Split::ExpertOutput : Split::Routed;
  if (g->kind != Kind::ActGrad || g->split != gradWanted || g->layer != layer) {
    errorWith(at, experts ? "expert-grad" : "backward-grad-layer", [&] {
      return side + " takes " +
             (experts ? "the gradient of their output dispatched to them (the gradient of " + layerOf(layer) +
                            "'s output sent with alltoall over the group the tokens came by)"
                      : "the gradient at the router (the experts' input gradient brought back with alltoall)") +
             ", but this is " + g->describe();
    });
    return false;
  }
  if (*a.batches != *g->batches || (experts && (a.step != g->step || a.total != g->total || *a.shards != *g->shards))) {
    errorWith(at, "backward-batches", [&] {
      return side + " mixes tokens: the activations are " + a.describe() + ", the gradient " + g->describe();
    });
    return false;
  }
  return true;
}

} // namespace schedc::sim
