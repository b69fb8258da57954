// Rank operations on values: the checks of the `puzzle` model (and schedc's stricter ones),
// the events they log (what each is and which events made its operands; engine/RankEvents.cpp)
// and the values they produce (each knowing the event that made it). Order matters and
// follows the original library: forward/backward/loss log their event before checking,
// update checks before logging. Memory is sampled when the event is logged, before the
// result is stored.
#include "engine/World.h"

namespace schedc::sim {

namespace {

bool anyPoisoned(std::initializer_list<const ValuePtr *> vs) {
  for (const ValuePtr *v : vs)
    if ((*v)->poisoned)
      return true;
  return false;
}

// The parts a layer's compute is split into: its weight's tensor-parallel parts, or 1.
int16_t tensorParts(const Value &w) {
  return w.split == Split::Part ? static_cast<int16_t>(w.total) : 1;
}

} // namespace

ValuePtr Rank::poison(Kind kind, int64_t layer) const {
  Value v;
  v.kind = kind;
  v.layer = layer;
  v.shards = singleSet(0);
  v.batches = emptySet();
  v.poisoned = true;
  return makeValue(std::move(v));
}

bool Rank::checkLayer(SourceRange at, const char *op, int64_t layer) {
  if (layer >= 0 && layer < world_.model_.layers)
    return true;
  errorWith(at, "layer-range", [&] {
    return std::string(op) + " of " + layerOf(layer) + ": the model has " + std::to_string(world_.model_.layers) +
           " layers (0 to " + std::to_string(world_.model_.layers - 1) + ")";
  });
  return false;
}

// ---- Operations ------------------------------------------------------------------------------

// Whether `piece` of `count` (shards or parts) names one; reports it if not.
bool Rank::checkPieces(SourceRange at, int64_t layer, int64_t piece, int64_t count, const char *what) {
  if (count < 1) {
    error(at, "load-shards",
          "load of " + layerOf(layer) + " into " + std::to_string(count) + " " + what + ": the number of " + what +
              " must be at least 1");
    return false;
  }
  if (piece < 0 || piece >= count) {
    std::string one = std::string(what) == "shards" ? "shard" : "part";
    error(at, "load-shards",
          "load of " + one + " " + std::to_string(piece) + " of " + std::to_string(count) + " of " + layerOf(layer) +
              ": " + what + " are numbered 0 to " + std::to_string(count - 1));
    return false;
  }
  return true;
}

bool Rank::tiedEmbeddings() const {
  const auto &model = world_.options_.bytes.transformer;
  return model && model->tiedEmbeddings && world_.model_.layers > 1;
}

bool Rank::holdsEmbeddingCopy(int64_t layer) const {
  return tiedEmbeddings() && layer == world_.model_.layers - 1 && !loadedFirstLayer_;
}

std::pair<ValuePtr, ValuePtr> Rank::load(SourceRange at, int64_t layer, int64_t shard, int64_t of, int64_t part,
                                         int64_t parts, int64_t expert, int64_t experts, int64_t on, int64_t optOn) {
  bool ok = checkLayer(at, "load", layer);
  const bool tiersOk = checkTierNumber(at, "on", on) && (optOn == -1 || checkTierNumber(at, "opt_on", optOn));
  ok = tiersOk && ok;
  const Tier weightTier = tiersOk ? static_cast<Tier>(on) : Tier::Device;
  const Tier optTier = tiersOk && optOn != -1 ? static_cast<Tier>(optOn) : weightTier;
  bool tensor = parts != 1 || part != 0;
  const bool moe = expert != -1 || experts != -1;
  if (moe) {
    ok = checkExpertsLoad(at, layer, of != 1 || shard != 0, tensor, expert, experts) && ok;
    ok = ok && (experts > 0 || checkPieces(at, layer, shard, of, "shards"));
    tensor = false;
  } else if (tensor && (of != 1 || shard != 0)) {
    error(at, "load-parts",
          "load of " + layerOf(layer) +
              " asks for both ZeRO shards (`shard`, `of`) and tensor-parallel parts (`part`, `parts`); a weight is "
              "split one way or the other");
    ok = false;
  } else if (const auto &model = world_.options_.bytes.transformer; tensor && model && model->tensorParallel > 1) {
    error(at, "load-parts",
          "load of part " + std::to_string(part) + " of " + std::to_string(parts) + " of " + layerOf(layer) +
              ", but the model " + model->name +
              " already has tensor_parallel = " + std::to_string(model->tensorParallel) +
              " (each rank one accelerator of its group): split layers in the schedule or in the model, not both");
    ok = false;
  } else {
    ok = (tensor ? checkPieces(at, layer, part, parts, "parts") : checkPieces(at, layer, shard, of, "shards")) && ok;
  }
  Value w;
  w.kind = Kind::Weight;
  w.layer = layer;
  const bool expertSlice = moe && experts > 0;
  w.shards = singleSet(!ok ? 0 : tensor ? part : expertSlice ? expert : shard);
  w.total = !ok ? 1 : tensor ? parts : expertSlice ? experts : of;
  w.split = !ok ? Split::None : tensor ? Split::Part : expertSlice ? Split::Experts : moe ? Split::Dense : Split::None;
  if (ok)
    storage_.setLayerForm(layer, {.parts = tensor ? parts : 1, .expertsApart = moe});
  w.batches = emptySet();
  w.poisoned = !ok;
  w.embeddingCopy = ok && holdsEmbeddingCopy(layer) && w.split != Split::Experts; // (the dense part's)
  loadedFirstLayer_ = loadedFirstLayer_ || (ok && layer == 0);
  loadedLastLayer_ = loadedLastLayer_ || (ok && layer == world_.model_.layers - 1);
  Value o = w;
  o.kind = Kind::OptState;
  w.tier = weightTier;
  o.tier = optTier;
  return {makeValue(std::move(w)), makeValue(std::move(o))};
}

ValuePtr Rank::input(SourceRange at, const IntSet &batches) {
  Value a;
  a.kind = Kind::Activation;
  a.layer = 0;
  a.shards = emptySet();
  if (!batches.empty() && (batches.min() < 0 || batches.max() >= world_.model_.batches)) {
    error(at, "input-range",
          "input of micro-batches " + batches.str() + ": there are " + std::to_string(world_.model_.batches) +
              " micro-batches (0 to " + std::to_string(world_.model_.batches - 1) + ")");
    a.poisoned = true;
  }
  a.batches = setOf(batches);
  for (int64_t b : batches.elements())
    if (b >= 0 && b < world_.model_.batches)
      world_.inputSeen_[static_cast<size_t>(b)].store(true, std::memory_order_relaxed);
  return makeValue(std::move(a));
}

// forward and backward of `layer` need the complete weight of that layer and the
// activations entering it.
bool Rank::checkWhole(SourceRange at, const char *op, int64_t layer, const Value &v) {
  if (v.split == Split::None)
    return true;
  reportNotWhole(at, op, layer, v);
  return false;
}

void Rank::reportNotWhole(SourceRange at, const char *op, int64_t layer, const Value &v) {
  std::string what = v.kind == Kind::Activation ? "output of " + layerOf(v.layer - 1)
                                                : "gradient of " + layerOf(v.layer) + "'s output";
  const std::string user = std::string(op) + (layer >= 0 ? " of " + layerOf(layer) : "");
  const std::string where = user + " uses the " + what + " on rank " + std::to_string(id_);
  switch (v.split) {
  case Split::PartialSum:
    error(at, "tensor-partial",
          where + ", but it is a partial sum: tensor-parallel parts " + v.shards->str() + " of " +
              std::to_string(v.total) + " only; all-reduce it over the ranks holding the other parts first");
    return;
  case Split::Sequence:
    error(at, "tensor-sequence",
          where + ", but it is split along the sequence: shards " + v.shards->str() + " of " + std::to_string(v.total) +
              " only; all-gather it over the ranks holding the other shards first");
    return;
  case Split::Routed:
    error(at, "expert-routed",
          user + " uses " + v.describe() + " on rank " + std::to_string(id_) +
              (v.kind == Kind::Activation
                   ? ": its tokens still have to go through the layer's experts (alltoall over the expert-parallel "
                     "group, forward with the experts, alltoall back)"
                   : ": it goes through the backward of the layer's dense part (its `experts = 0` weight)"));
    return;
  case Split::Dispatched:
  case Split::ExpertOutput:
    error(at, "expert-dispatched",
          user + " uses " + v.describe() + " on rank " + std::to_string(id_) +
              ": its tokens are at their experts, dispatched over " + std::to_string(v.total) +
              " ranks; bring them back with alltoall over the same group first");
    return;
  case Split::None:
  case Split::Part:
  case Split::Dense:
  case Split::Experts: break;
  }
  SCHEDC_UNREACHABLE("a whole value reported as not whole");
}

bool Rank::checkComputeInputs(SourceRange at, const char *op, int64_t layer, const Value &a, const Value &w) {
  auto user = [&] { return std::string(op) + " of " + layerOf(layer); };
  if (!checkOnDevice(at, user, a) || !checkOnDevice(at, user, w))
    return false;
  bool ok = checkWhole(at, op, layer, a);
  if (w.layer != layer) {
    errorWith(at, "weight-layer",
              [&] { return std::string(op) + " of " + layerOf(layer) + " uses the weight of " + layerOf(w.layer); });
    ok = false;
  } else if (!w.complete() && w.split != Split::Part) {
    errorWith(at, "weight-sharded", [&] {
      return std::string(op) + " of " + layerOf(layer) + " needs the complete weight, but rank " + std::to_string(id_) +
             " holds only shards " + w.shards->str() + " of " + std::to_string(w.total) +
             " (all-gather the weight first)";
    });
    ok = false;
  }
  if (a.layer != layer && a.split == Split::None) { // (a value not whole is reported as that)
    errorWith(at, "input-layer", [&] {
      return std::string(op) + " of " + layerOf(layer) + " takes the activations entering " + layerOf(layer) +
             ", but this is " + a.describe();
    });
    ok = false;
  }
  return ok;
}

ValuePtr Rank::forward(SourceRange at, int64_t layer, const ValuePtr &a, const ValuePtr &w) {
  if (halfOf(*w) != cost::LayerHalf::Whole)
    return forwardHalf(at, layer, a, w);
  readsInput(a, false, at);
  cost::Producers made = logEvent({.kind = EventKind::Forward,
                                   .tensorParts = tensorParts(*w),
                                   .sequenceParts = sequenceParallelIn(layer, *a, true),
                                   .layer = layer,
                                   .microBatches = static_cast<int64_t>(a->batches->size())},
                                  a->batches, at, merge(a->made, w->made));
  bool ok = checkLayer(at, "forward", layer);
  if (ok && !anyPoisoned({&a, &w}))
    ok = checkComputeInputs(at, "forward", layer, *a, *w);
  Value out;
  out.kind = Kind::Activation;
  out.layer = layer + 1;
  out.shards = emptySet();
  if (w->split == Split::Part) { // a part of the layer makes its part of the sum
    out.split = Split::PartialSum;
    out.shards = w->shards;
    out.total = w->total;
  }
  out.batches = a->batches;
  out.poisoned = !ok || a->poisoned || w->poisoned;
  out.made = made;
  return makeValue(std::move(out));
}

std::pair<ValuePtr, ValuePtr> Rank::backward(SourceRange at, int64_t layer, const ValuePtr &a, const ValuePtr &g,
                                             const ValuePtr &w, BackwardPart part) {
  if (halfOf(*w) != cost::LayerHalf::Whole)
    return backwardHalf(at, layer, a, g, w, part);
  EventKind kind = backwardEvent(part);
  const char *name = eventName(kind);
  readsInput(a, true, at);
  cost::Producers made = logEvent({.kind = kind,
                                   .tensorParts = tensorParts(*w),
                                   .sequenceParts = sequenceParallelIn(layer, *a, false),
                                   .layer = layer,
                                   .microBatches = static_cast<int64_t>(a->batches->size())},
                                  a->batches, at, merge(merge(a->made, g->made), w->made));
  bool ok = checkLayer(at, name, layer);
  if (ok && !anyPoisoned({&a, &g, &w})) {
    ok = checkComputeInputs(at, name, layer, *a, *w);
    ok = ok && checkOnDevice(
                   at, [&] { return std::string(name) + " of " + layerOf(layer); }, *g);
    ok = checkWhole(at, name, layer, *g) && ok;
    if (g->layer != layer) {
      errorWith(at, "backward-grad-layer", [&] {
        return std::string(name) + " of " + layerOf(layer) + " takes the gradient of " + layerOf(layer) +
               "'s output, but this is the gradient of " + layerOf(g->layer) + "'s output";
      });
      ok = false;
    } else if (*a->batches != *g->batches) {
      errorWith(at, "backward-batches", [&] {
        return std::string(name) + " of " + layerOf(layer) + " mixes micro-batches: the activations are of " +
               a->batches->str() + ", the gradient of " + g->batches->str();
      });
      ok = false;
    }
  }
  bool poisoned = !ok || a->poisoned || g->poisoned || w->poisoned;
  Value gw;
  gw.kind = Kind::WeightGrad;
  gw.layer = layer;
  gw.embeddingCopy = w->embeddingCopy;
  gw.batches = a->batches;
  gw.shards = singleSet(0);
  gw.total = 1;
  if (w->split == Split::Part) { // the gradient of the part's weights, and its share of the input's
    gw.split = Split::Part;
    gw.shards = w->shards;
    gw.total = w->total;
  }
  gw.forged = g->forged;
  gw.poisoned = poisoned;
  gw.made = made;
  Value ga;
  ga.kind = Kind::ActGrad;
  ga.layer = layer - 1;
  ga.batches = a->batches;
  ga.shards = emptySet();
  if (w->split == Split::Part) {
    ga.split = Split::PartialSum;
    ga.shards = w->shards;
    ga.total = w->total;
  }
  ga.forged = g->forged;
  ga.poisoned = poisoned;
  ga.made = gw.made;
  return {makeValue(std::move(gw)), makeValue(std::move(ga))};
}

ValuePtr Rank::loss(SourceRange at, const ValuePtr &a) {
  int64_t L = world_.model_.layers;
  cost::Producers made = logEvent({.kind = EventKind::Loss,
                                   .layer = a->layer,
                                   .microBatches = a->batches ? static_cast<int64_t>(a->batches->size()) : 0},
                                  nullptr, at, a->made);
  bool ok = a->poisoned || (checkOnDevice(
                                at, [] { return std::string("loss"); }, *a) &&
                            checkWhole(at, "loss", -1, *a));
  if (ok && !a->poisoned && a->layer != L) {
    error(at, "loss-layer",
          "loss takes the output of the last layer (the activations of layer " + std::to_string(L) + "), but this is " +
              a->describe());
    ok = false;
  }
  Value g;
  g.kind = Kind::ActGrad;
  g.layer = L - 1;
  g.batches = a->batches;
  g.shards = emptySet();
  g.poisoned = !ok || a->poisoned;
  g.made = made;
  return makeValue(std::move(g));
}

std::optional<Diagnostic> Rank::gradientCollectiveNote(int64_t layer, const IntSet &missing) const {
  const GradientCollective *last = lastGradientCollective_.get();
  const std::string missingText = missing.str();
  if (!last) {                   // no weight gradient of any layer was combined on this rank
    if (world_.model_.ranks > 1) // (what other ranks have input by now depends on the threads: not looked at)
      return note({}, "no collective combines rank " + std::to_string(id_) + "'s gradient of " + layerOf(layer) +
                          " with other ranks' before this update, so it holds only what its own backward "
                          "computed: if other ranks compute micro-batches " +
                          missingText +
                          " (data parallelism), all-reduce (or reduce-scatter) it over them; if none does, a "
                          "backward loop's bound that stops short?");
    bool allInput = std::all_of(missing.elements().begin(), missing.elements().end(), [&](int64_t b) {
      return b >= 0 && b < world_.model_.batches && world_.inputSeen_[static_cast<size_t>(b)].load();
    });
    if (!allInput) // (those never input get World::explainMissingBatches's note)
      return std::nullopt;
    return note({}, "micro-batches " + missingText + " enter the step (`input`), but no backward of " + layerOf(layer) +
                        " computes their gradient: a backward loop's bound that stops short?");
  }
  std::string text = std::string(last->layer == layer ? "its gradient is last combined by this "
                                                      : "this rank's last gradient collective (of " +
                                                            layerOf(last->layer) + ") is this ") +
                     collectiveName(last->kind);
  if (static_cast<int64_t>(last->group->size()) == world_.model_.ranks)
    return note(last->at, text + ", over every rank: no gradient it combines holds micro-batches " + missingText +
                              " (a backward that did not run, or a gradient left out "
                              "of a sum?)");
  return note(last->at, text + " over ranks " + last->group->str() + ", none of whose gradients holds micro-batches " +
                            missingText + ": if ranks outside it compute them, combine it over those too");
}

std::pair<ValuePtr, ValuePtr> Rank::update(SourceRange at, int64_t layer, const ValuePtr &g, const ValuePtr &w,
                                           const ValuePtr &o) {
  bool ok = checkLayer(at, "update", layer);
  if (ok && !anyPoisoned({&g, &w, &o})) {
    for (const ValuePtr *v : {&g, &w, &o})
      if ((*v)->layer != layer) {
        errorWith(at, "update-layer", [&] { return "update of " + layerOf(layer) + " is given " + (*v)->describe(); });
        ok = false;
      }
    if (ok && (g->split != w->split || o->split != w->split) &&
        (isSide(*g) || isSide(*w) || isSide(*o))) { // a side's gradient for the other side's weight
      errorWith(at, "update-side", [&] {
        return "update of " + layerOf(layer) + " has the gradient of " + g->slices() + " for a weight of " +
               w->slices() + " and an optimizer state of " + o->slices() +
               ": each side of the layer is updated with its own";
      });
      ok = false;
    }
    const IntSet &have = *g->batches;
    if (ok && !have.isPrefix(world_.model_.batches)) {
      errorWith(at, "update-missing-batches", [&] {
        IntSet missing = IntSet::range(0, world_.model_.batches).minus(have);
        std::string msg = "update of " + layerOf(layer) + " on rank " + std::to_string(id_) +
                          " has gradients for micro-batches " + have.str();
        if (!missing.empty())
          msg += "; missing " + missing.str();
        IntSet extra = have.minus(IntSet::range(0, world_.model_.batches));
        if (!extra.empty())
          msg += "; " + extra.str() + " are not micro-batches";
        std::vector<Diagnostic> notes;
        if (std::optional<Diagnostic> why =
                missing.empty() || g->split == Split::Experts ? std::nullopt : gradientCollectiveNote(layer, missing))
          notes.push_back(std::move(*why));
        if (g->split == Split::Experts && !missing.empty())
          notes.push_back(note({}, "an experts' gradient holds the micro-batches of the group its tokens were "
                                   "dispatched over: sum it over the ranks that hold the same experts' slice in "
                                   "the other groups (the experts' data-parallel group), not the dense part's"));
        return std::make_pair(std::move(msg), std::move(notes));
      });
      ok = false;
    }
    if (ok && g->total > 1 &&
        (!slicesCover(*g->shards, g->total, *w->shards, w->total) ||
         !slicesCover(*g->shards, g->total, *o->shards, o->total))) {
      bool weightCovered = slicesCover(*g->shards, g->total, *w->shards, w->total);
      const Value &uncovered = weightCovered ? *o : *w;
      errorWith(at, "update-shards", [&] {
        return "update of " + layerOf(layer) + " has the gradient of " + g->slices() + " for " +
               (weightCovered ? "an optimizer state of " : "a weight of ") + uncovered.slices();
      });
      ok = false;
    }
    if (ok && (!slicesCover(*w->shards, w->total, *o->shards, o->total) ||
               !slicesCover(*o->shards, o->total, *w->shards, w->total))) {
      errorWith(at, "update-opt-shards", [&] {
        return "update of " + layerOf(layer) + " has a weight of " + w->slices() + " but an optimizer state of " +
               o->slices();
      });
      ok = false;
    }
    if (ok && w->step != o->step) {
      errorWith(at, "update-steps", [&] {
        return "update of " + layerOf(layer) + " has a weight at step " + std::to_string(w->step) +
               " but an optimizer state at step " + std::to_string(o->step);
      });
      ok = false;
    }
    ok = ok && checkUpdateTiers(at, layer, *g, *w, *o);
    if (ok) {
      Updated &done = (w->split == Split::Experts ? expertsUpdated_ : updated_)[layer];
      if (done.shards && done.total == w->total && !done.shards->intersect(*w->shards).empty()) {
        errorWith(at, "update-twice", [&] {
          return std::pair{layerOf(layer) + " is updated twice on rank " + std::to_string(id_) + " (shards " +
                               done.shards->intersect(*w->shards).str() + " of " + std::to_string(w->total) + ")",
                           std::vector<Diagnostic>{note(world_.site(done.at), "it is first updated here")}};
        });
        ok = false;
      } else if (!done.shards) {
        done = Updated{w->shards, w->total, lane_->sites.intern(at)};
      } else if (done.total == w->total) {
        done.shards = setOf(done.shards->unite(*w->shards));
      }
    }
  }
  // An end of Megatron's embedding group: the last layer with the embedding's copy, or the
  // first layer on a rank that holds no last layer (whose copy is then another rank's).
  const bool embeddingGroup =
      tiedEmbeddings() && w->split != Split::Experts &&
      ((layer == world_.model_.layers - 1 && w->embeddingCopy) || (layer == 0 && !loadedLastLayer_));
  cost::Producers made = logEvent({.kind = EventKind::Update,
                                   .data = cost::Data::Weights,
                                   .embeddingCopy = w->embeddingCopy,
                                   .half = halfOf(*w),
                                   .embeddingGroup = embeddingGroup,
                                   .tier = o->tier,
                                   .nodes = embeddingGroup ? world_.spanOfNodes() : 1,
                                   .updatedLayer = static_cast<int32_t>(layer),
                                   .volume = w->memory().asDouble()},
                                  nullptr, at, merge(merge(g->made, w->made), o->made));
  bool poisoned = !ok || g->poisoned || w->poisoned || o->poisoned;
  Value nw = *w;
  nw.layer = layer; // a failed update still belongs to the layer it meant to update
  nw.step = w->step + 1;
  nw.forged = g->forged || w->forged;
  nw.poisoned = poisoned;
  nw.made = made;
  nw.tier = o->tier; // made where the update runs
  Value no = *o;
  no.layer = layer;
  no.step = o->step + 1;
  no.forged = nw.forged;
  no.poisoned = poisoned;
  no.made = nw.made;
  return {makeValue(std::move(nw)), makeValue(std::move(no))};
}

ValuePtr Rank::addGrad(SourceRange at, const ValuePtr &a, const ValuePtr &b) {
  bool ok = true;
  if (!anyPoisoned({&a, &b})) {
    if (a->layer != b->layer) {
      error(at, "add-layers", "adds the gradients of " + layerOf(a->layer) + " and " + layerOf(b->layer));
      ok = false;
    } else if (a->split != b->split && (isSide(*a) || isSide(*b))) {
      error(at, "add-shards", "adds gradients of different sides (" + a->slices() + " and " + b->slices() + ")");
      ok = false;
    } else if (a->total != b->total || *a->shards != *b->shards) {
      error(at, "add-shards",
            "adds gradients of different shards (" + a->shards->str() + " of " + std::to_string(a->total) + " and " +
                b->shards->str() + " of " + std::to_string(b->total) + ")");
      ok = false;
    } else if (a->tier != b->tier || a->tier == Tier::Nvme) {
      error(at, "tier-add",
            "adds " + a->describe() + " and " + b->describe() +
                ": gradients are added on the device or in host memory, both in the same; " +
                (a->tier == b->tier ? "prefetch both first" : "move one first"));
      ok = false;
    } else if (IntSet both = a->batches->intersect(*b->batches); !both.empty()) {
      error(at, "add-overlap",
            "adds the gradient of micro-batches " + both.str() + " twice (they are in both operands)");
      ok = false;
    }
  }
  Value s = *a;
  s.batches = setOf(a->batches->unite(*b->batches));
  s.forged = a->forged || b->forged;
  s.poisoned = !ok || a->poisoned || b->poisoned;
  s.made = merge(a->made, b->made); // no event: ready when both are
  return makeValue(std::move(s));
}

ValuePtr Rank::fakeGrad(SourceRange at, int64_t layer, const IntSet &batches) {
  bool ok = checkLayer(at, "fake_grad", layer);
  if (!batches.empty())
    warning(at, "fake-grad",
            "`fake_grad` forges a gradient of micro-batches " + batches.str() +
                ": a schedule that uses it is not a real training step");
  Value g;
  g.kind = Kind::WeightGrad;
  g.layer = layer;
  g.batches = setOf(batches);
  g.shards = singleSet(0);
  g.total = 1;
  g.forged = !batches.empty();
  g.poisoned = !ok;
  g.embeddingCopy = ok && holdsEmbeddingCopy(layer);
  return makeValue(std::move(g));
}

} // namespace schedc::sim
