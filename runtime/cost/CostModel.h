// CostModel — how long each event of a run takes, and on which stream of its rank it runs.
// The sim backend records what every event is and what it waits for (cost/Placement.h); a
// cost model prices it, and placement puts it in time. Two models exist:
//   puzzle        the LLM Training Puzzles library's model, exactly (../shared/SEMANTICS.md):
//                 forward and backward take one unit per micro-batch, each half of a split
//                 backward half of that, loss 0, update 0.5, a collective 0.3, a send or a
//                 receive 0.2, an offload or a prefetch 0.2 (a copy, as a send); all on one
//                 clock per rank
//   compute-only  the puzzle model with communication and copies between memory tiers free
//                 (the bubble formulas of pipeline schedules assume it)
//   hardware      seconds of a transformer on a machine (cost/HardwareCost.h): made for a
//                 run from --model and --hardware, each event on the stream of its class
// A model either runs every event of a rank on its compute stream (one clock, as the puzzle
// library does) or each event on the stream of its class (cost/Streams.h); nothing between,
// so that the events of one stream always belong to one class.
#pragma once

#include "cost/Kernels.h"
#include "cost/Streams.h"
#include "numbers/Number.h"

#include <span>
#include <string>
#include <string_view>

namespace schedc::cost {

// What data an event moves or updates, for a model that prices its bytes.
enum class Data : uint8_t { None, Weights, Gradients, OptimizerState, Activations };

// What an event is, as a cost model prices it.
struct Work {
  EventKind kind = EventKind::Forward;
  Data data = Data::None;
  int16_t tensorParts = 1;           // forward, backward: the tensor-parallel parts the layer is split into
  bool sequenceParts = false;        // forward, backward: its input gathered from sequence shards (the
                                     // norms, dropout and residual adds run on a shard)
  bool embeddingCopy = false;        // collectives, update: the last layer's data with the output
                                     // layer's copy of a tied word embedding (sim::Value::embeddingCopy)
  LayerHalf half = LayerHalf::Whole; // forward, backward: the part of the layer it computes: all
                                     // of it, or one side of a mixture-of-experts layer split
                                     // around its all-to-alls (docs/language.md, "Experts"); update,
                                     // collectives, sends: the side the weight-sized data is of
  bool embeddingGroup = false;       // update: this rank is an end of Megatron-LM's embedding group,
                                     // whose tied embedding's gradient is all-reduced first (`nodes`: 2
                                     // where the run spans nodes)
  bool tokenCopies = false;          // all-to-alls and sends: a mixture-of-experts layer's tokens at
                                     // its router or at its experts, each token's top-k copies
  Tier tier = Tier::Device;          // update: where it runs (its optimizer state's tier); offload and
                                     // prefetch: the tier the value is copied to ...
  Tier source = Tier::Device;        // ... from this one
  int32_t groupSize = 0;             // collectives: the ranks taking part; the experts' forward and
                                     // backward: the ranks their tokens were dispatched over
  int32_t nodes = 1;                 // collectives and sends: the nodes those ranks are on (CostModel::nodeOf)
  int32_t updatedLayer = -1;         // update: its weight's layer (`layer` stays -1, as the puzzle shows it)
  int64_t layer = -1;                // -1: none
  int64_t microBatches = 0;          // forward, backward and its halves, loss: the micro-batches computed on
  // Collectives and sends: the units of data moved (the puzzle's memory units); update: the
  // units of the weight it updates; offload, prefetch: the bytes copied (the byte model's,
  // sim/Bytes.h: what the value takes where it lands).
  double volume = 0;
};

class CostModel {
public:
  virtual ~CostModel() = default;
  virtual std::string_view name() const = 0;
  // True: a rank runs every event on its compute stream, one after another.
  virtual bool oneStream() const = 0;
  virtual Number length(const Work &work) const = 0;
  // The lengths of collectives coalesced into one call (a `group`'s: one kind over the same
  // ranks), into `lengths`, one each: together the call's. By default each is priced as a
  // call of its own (the puzzle's 0.3 each).
  virtual void coalescedLengths(std::span<const Work> call, std::span<Number> lengths) const {
    for (size_t i = 0; i < call.size(); ++i)
      lengths[i] = length(call[i]);
  }
  // The floating-point operations an event computes (recomputation included), and those
  // the model itself needs (each layer's forward and backward once per micro-batch, counted
  // at its backward); 0 where the model counts none.
  virtual double flops(const Work & /*work*/) const { return 0; }
  virtual double modelFlops(const Work & /*work*/) const { return 0; }
  // The bytes a collective or a send puts in (its input), where the model prices bytes; 0
  // elsewhere.
  virtual double communicationBytes(const Work & /*work*/) const { return 0; }
  // Whether it can price the two sides of a mixture-of-experts layer (LayerHalf): the puzzle
  // by its convention, a layer model only where its layers have routed experts.
  virtual bool modelsExperts() const { return true; }
  // Whether its lengths are seconds (else the puzzle's time steps).
  virtual bool inSeconds() const { return false; }
  // Whether it prices transfers by the nodes they span; if so, the node of each rank.
  virtual bool placesRanksOnNodes() const { return false; }
  virtual int64_t nodeOf(int64_t /*rank*/) const { return 0; }
  // What the model lacks to price a copy between `from` and `to` or an update on `where` (a
  // bandwidth its machine does not give, named as its hardware key), or "".
  virtual std::string missingForTier(Tier /*from*/, Tier /*to*/) const { return ""; }

  Stream stream(EventKind k) const { return oneStream() ? Stream::Compute : streamOfClass(k); }
};

// The model `--cost-model=NAME` names, or null.
const CostModel *findCostModel(std::string_view name);
// "puzzle, compute-only": every name findCostModel knows, for messages and help.
std::string costModelNames();
// The default model.
const CostModel &puzzleCost();

} // namespace schedc::cost
