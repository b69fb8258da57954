// Bounds implementation: one pass over the model's layers, each priced as the sim prices an
// event of one micro-batch (cost::HardwareCost::length) and a value of it (sim::ByteModel).
#include "plan/Bounds.h"

#include "diagnostics/InternalError.h"

#include <algorithm>

namespace schedc::plan {

namespace {

// A compute event of `layer` over `microBatches`, as the sim logs one.
cost::Work computeWork(EventKind kind, int64_t layer, int64_t microBatches) {
  return cost::Work{.kind = kind, .layer = layer, .microBatches = microBatches};
}

double eventSeconds(const cost::HardwareCost &cost, EventKind kind, int64_t layer, int64_t microBatches) {
  return cost.length(computeWork(kind, layer, microBatches)).asDouble();
}

// A mixture-of-experts layer split around its all-to-alls, for one micro-batch on a rank of an
// expert-parallel group of `group` (stdlib/moe.sched): its dense part's event on the
// micro-batch, and its experts' on the group's micro-batches, one from each member, as the
// sim logs them (engine/Experts.cpp).
double splitSeconds(const cost::HardwareCost &cost, EventKind kind, int64_t layer, int64_t group) {
  cost::Work dense = computeWork(kind, layer, 1), experts = computeWork(kind, layer, group);
  dense.half = cost::LayerHalf::Dense;
  experts.half = cost::LayerHalf::Experts;
  experts.groupSize = static_cast<int32_t>(group);
  return cost.length(dense).asDouble() + cost.length(experts).asDouble();
}

// The first rank's warm-up in 1F1B's order, chunk forwards before its first backward: p - 1,
// twice that with more than one chunk and whole groups of p micro-batches (Megatron-LM's and
// interleaved.sched's extra warm-up), and (v - 1)p more; at most all of them.
int64_t warmUp(const Candidate &c) {
  int64_t perReplica = c.batches / c.replicas;
  int64_t extra = c.chunks > 1 && perReplica % c.stages == 0 ? 1 : 0;
  return std::min((c.stages - 1) * (1 + extra) + (c.chunks - 1) * c.stages, perReplica * c.chunks);
}

// Chunk forwards of one micro-batch (a data-parallel rank's share: one) the first rank holds
// when its first backward starts, by its family's order (plan/Space.h's Order).
int64_t heldAtFirstBackward(const Candidate &c) {
  int64_t perReplica = c.batches / c.replicas;
  switch (c.family->order) {
  case Order::FillDrain: return c.family->layout == Layout::DataParallel ? 1 : perReplica;
  case Order::OneFOneB: return std::min(warmUp(c) + 1, perReplica * c.chunks);
  case Order::VShape: return std::min(2 * c.stages - 1, perReplica);
  case Order::Searched: return 1;
  }
  SCHEDC_UNREACHABLE("an order without its warm-up");
}

} // namespace

Bounds boundsOf(const Candidate &c, const cost::HardwareCost &cost, const sim::ByteModel &bytes, double overlapHidden) {
  const cost::Transformer &model = *bytes.transformer;
  const int64_t layers = model.layers;
  // A data-parallel rank runs its share of the micro-batches as one batch; a pipeline
  // replica runs them one by one.
  int64_t perReplica = c.batches / c.replicas;
  int64_t together = c.family->layout == Layout::DataParallel ? perReplica : 1;
  double passes = static_cast<double>(perReplica / together);
  // The device's share of each (what a family keeps in host memory or on NVMe is not on it).
  double weightShare = c.family->offloadsWeights ? 0
                       : c.family->shardsWeights ? 1.0 / static_cast<double>(c.replicas)
                                                 : 1.0;
  double optimizerShare = c.family->offloadsOptimizer                  ? 0
                          : c.family->shardsOptimizer || c.distributed ? 1.0 / static_cast<double>(c.replicas)
                                                                       : 1.0;
  double weightBytes = bytes.elementBytes(sim::Kind::Weight), optimizerBytes = bytes.elementBytes(sim::Kind::OptState);
  double gradientBytes = model.mainGradBuffer ? 0 : bytes.elementBytes(sim::Kind::WeightGrad);

  // Per layer: a forward, a backward (the cheaper of whole and halves), its input half (what
  // a zero-bubble schedule cannot defer), the state kept, the whole gradient and one pass's
  // activations.
  std::vector<double> forward(layers), backward(layers), chained(layers), state(layers), gradient(layers), kept(layers);
  for (int64_t l = 0; l < layers; ++l) {
    // A layer whose routed experts an expert-parallel group splits: both sides' events, its
    // dense part's parameters whole and 1/e of its routed experts'; its activations are a
    // whole layer's (the dense part's on the layer's input, the experts' on the dispatched
    // tokens: balanced routing), or more (the checkpoint beside the tokens, under full
    // recomputation).
    const bool split = c.family->layout == Layout::ExpertMesh && model.moeLayer(l);
    auto seconds = [&](EventKind kind) {
      return split ? splitSeconds(cost, kind, l, c.experts) : eventSeconds(cost, kind, l, together);
    };
    double input = seconds(EventKind::BackwardInput);
    forward[l] = seconds(EventKind::Forward);
    backward[l] = std::min(seconds(EventKind::Backward), input + seconds(EventKind::BackwardWeight));
    chained[l] = c.family->splitsBackward ? std::min(input, backward[l]) : backward[l];
    double routed = split ? model.rankRoutedParameters(l) : 0;
    double parameters = model.rankParameters(l) - routed + routed / static_cast<double>(c.experts);
    state[l] = parameters * (weightBytes * weightShare + optimizerBytes * optimizerShare);
    gradient[l] = parameters * gradientBytes;
    kept[l] = c.family->offloadsActivations ? 0 : bytes.layerActivationBytes(l, static_cast<double>(together));
  }
  Bounds b;
  // Each stage: before its first layer d, one micro-batch's forward through layers 0 .. d-1
  // (on other ranks); after its last backward that is not a deferred weight half, that
  // micro-batch's backward through them.
  for (int64_t s = 0; s < c.stages; ++s) {
    std::vector<std::pair<int64_t, int64_t>> chunks = c.stageChunks(s, layers);
    int64_t first = chunks[0].first;
    double all = 0, undeferred = 0, head = 0, tail = 0;
    for (const auto &[begin, end] : chunks)
      for (int64_t l = begin; l < end; ++l) {
        all += passes * (forward[l] + backward[l]);
        undeferred += passes * (forward[l] + chained[l]);
      }
    for (int64_t l = 0; l < first; ++l) {
      head += forward[l];
      tail += chained[l];
    }
    b.seconds = std::max(b.seconds, (head + std::max(all, undeferred + tail)) * (1 - overlapHidden));
    // Its state all step; one micro-batch's activations through all its layers (held when
    // its last chunk's backward starts), with the logits where the loss is; and, where the
    // family keeps them, every whole gradient before its first update.
    double stateBytes = 0, gradients = 0, pass = 0;
    for (const auto &[begin, last] : chunks)
      for (int64_t l = begin; l < last; ++l) {
        stateBytes += state[l];
        gradients += gradient[l];
        pass += kept[l];
      }
    if (std::any_of(chunks.begin(), chunks.end(), [&](const auto &chunk) { return chunk.second == layers; }))
      pass += bytes.logitsBytes(static_cast<double>(together));
    b.bytes = std::max(b.bytes, stateBytes + pass);
    if (c.family->keepsGradients)
      b.bytes = std::max(b.bytes, stateBytes + gradients);
    // A stage of one chunk that accumulates whole backwards over micro-batches (GPipe, 1F1B,
    // Megatron without interleaving): from the first micro-batch's backward on, every
    // gradient is held; the last micro-batch's activations are too, when its backward starts.
    if (c.family->keepsGradients && c.family->layout != Layout::DataParallel && chunks.size() == 1 &&
        !c.family->splitsBackward && perReplica >= 2)
      b.bytes = std::max(b.bytes, stateBytes + gradients + pass);
  }

  // The first rank: its state, and the chunk forwards held when its first backward starts,
  // each at least its lightest chunk's (the first chunk's in a V, whose forwards come first).
  double first = 0, lightest = -1;
  std::vector<std::pair<int64_t, int64_t>> chunks = c.stageChunks(0, layers);
  for (size_t k = 0; k < chunks.size(); ++k) {
    double activations = 0;
    for (int64_t l = chunks[k].first; l < chunks[k].second; ++l) {
      first += state[l];
      activations += kept[l];
    }
    if (lightest < 0 || (!c.vShape() && activations < lightest) || (c.vShape() && k == 0))
      lightest = activations;
  }
  b.bytes = std::max(b.bytes, first + static_cast<double>(heldAtFirstBackward(c)) * lightest);
  // Later, with every gradient of the first rank made (whole backwards, accumulated): in 1F1B's
  // steady state a backward starts with the warm-up and one more in flight, and chunk 0's
  // first backward is the (v - 1)p-th, so the one after it, if the steady state lasts, sees
  // them all; in GPipe's drain the second backward sees m - 1 micro-batches.
  if (c.family->keepsGradients && !c.family->splitsBackward && c.family->layout != Layout::DataParallel) {
    double gradients = 0;
    for (const auto &[begin, end] : chunks)
      for (int64_t l = begin; l < end; ++l)
        gradients += gradient[l];
    int64_t total = perReplica * c.chunks, inFlight = 0;
    if (c.family->order == Order::OneFOneB && (c.chunks - 1) * c.stages + 1 < total - warmUp(c))
      inFlight = warmUp(c) + 1;
    if (c.family->order == Order::FillDrain && perReplica >= 2)
      inFlight = perReplica - 1;
    if (inFlight > 0)
      b.bytes = std::max(b.bytes, first + gradients + static_cast<double>(inFlight) * lightest);
  }
  return b;
}

std::vector<double> fingerprintOf(const cost::HardwareCost &cost, const sim::ByteModel &bytes) {
  const cost::Transformer &model = *bytes.transformer;
  std::vector<double> out;
  for (int64_t l = 0; l < model.layers; ++l) {
    for (EventKind kind :
         {EventKind::Forward, EventKind::Backward, EventKind::BackwardInput, EventKind::BackwardWeight}) {
      out.push_back(eventSeconds(cost, kind, l, 1));
      out.push_back(cost.flops(computeWork(kind, l, 1)));
      // Its sides, for stdlib moe, on a group of 2: recomputation changes what a side computes
      // for each token, whatever the group (the experts' side on e micro-batches of 1/e of the
      // tokens each), so two variants whose sides agree on a group of 2 agree on any.
      if (model.moeLayer(l))
        out.push_back(splitSeconds(cost, kind, l, 2));
    }
    out.push_back(model.activationBytes(l));
    out.push_back(model.moeLayer(l) ? model.routedActivationBytes(l) : 0);
  }
  return out;
}

double stageMessageSeconds(const Candidate &c, const cost::HardwareCost &cost) {
  double slowest = 0;
  for (int64_t s = 0; s + 1 < c.stages; ++s) {
    int64_t nodes = cost.nodeOf(s) == cost.nodeOf(s + 1) ? 1 : 2;
    slowest = std::max(slowest, cost.activationMessageSeconds(nodes));
  }
  return slowest;
}

std::vector<StageCosts> stageCostsOf(const Candidate &c, const cost::HardwareCost &cost, const sim::ByteModel &bytes) {
  const cost::Transformer &model = *bytes.transformer;
  double gradientBytes = model.boundaryElements() * bytes.elementBytes(sim::Kind::ActGrad);
  double weightGradientBytes = bytes.elementBytes(sim::Kind::WeightGrad);
  std::vector<StageCosts> out(static_cast<size_t>(c.stages));
  for (int64_t s = 0; s < c.stages; ++s)
    for (const auto &[begin, end] : c.stageChunks(s, model.layers))
      for (int64_t l = begin; l < end; ++l) {
        StageCosts &stage = out[static_cast<size_t>(s)];
        stage.forward += eventSeconds(cost, EventKind::Forward, l, 1);
        stage.input += eventSeconds(cost, EventKind::BackwardInput, l, 1);
        stage.weight += eventSeconds(cost, EventKind::BackwardWeight, l, 1);
        stage.activations += bytes.layerActivationBytes(l, 1);
        stage.gradients += gradientBytes;
        stage.weightGradients += model.mainGradBuffer ? 0 : model.rankParameters(l) * weightGradientBytes;
      }
  return out;
}

} // namespace schedc::plan
