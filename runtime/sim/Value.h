// Value — the metadata the sim backend tracks for every training value (no tensors): its
// kind, layer, optimizer step, shards and micro-batches, and the units of memory it takes
// under the `puzzle` cost model, and the events of its rank that made it. Values are immutable
// and shared within a rank (a value stored under two names is one object); each member of a
// collective and the receiver of a message get their own, made by their own event.
#pragma once

#include "cost/CostModel.h"
#include "cost/Streams.h"
#include "diagnostics/SourceManager.h"
#include "numbers/Number.h"
#include "ops/Operations.h"
#include "sim/IntSet.h"

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>
#include <memory>
#include <string>

namespace schedc::sim {

// The kinds of value (support/ops/ValueKinds.def), in storage-class order: memory is summed
// over classes in this order.
using Kind = ValueKind;
constexpr int kKinds = kValueKinds;
// "weight", "activation gradient", ...; "weights", "activation gradients", ...
inline const char *kindName(Kind k) {
  return valueKindName(k);
}
inline const char *kindPlural(Kind k) {
  return valueKindPlural(k);
}
// What a cost model that prices bytes takes a value of kind `k` for.
inline cost::Data dataOf(Kind k) {
  switch (k) {
  case Kind::Weight: return cost::Data::Weights;
  case Kind::WeightGrad: return cost::Data::Gradients;
  case Kind::OptState: return cost::Data::OptimizerState;
  case Kind::Activation:
  case Kind::ActGrad: return cost::Data::Activations;
  }
  return cost::Data::None;
}

// How a value is split by tensor parallelism (docs/language.md, "Tensor parallelism").
enum class Split : uint8_t {
  None,       // whole (or, for weights, ZeRO shards: `shards` of `total`)
  Part,       // a weight, optimizer state or weight gradient of tensor-parallel parts `shards` of `total`
  PartialSum, // an activation or activation gradient summed over parts `shards` of `total` only
  Sequence,   // an activation or activation gradient of sequence shards `shards` of `total` (sequence parallelism)
  // Mixture of experts (docs/language.md, "Experts"). A weight, optimizer state or weight gradient:
  Dense,   // of the layer without its routed experts (`shards` of `total`: ZeRO shards of that)
  Experts, // of the routed experts' slice `shards` of `total` only (expert parallelism)
  // An activation or activation gradient of a layer `layer` whose experts run on other ranks too:
  Routed,       // at the router, the rank's own tokens, whole: what a dispatch sends out (an activation),
                // or what the combine of the experts' input gradient brings back (a gradient)
  Dispatched,   // at the experts, before them: the dispatch group's tokens routed to this rank
  ExpertOutput, // at the experts, after them: the experts' output (layer + 1), or the gradient of it
  // A Dispatched or ExpertOutput value holds micro-batches `batches` (the dispatch group's, a
  // 1/`total` share of their tokens, balanced routing); `shards` are the micro-batches it
  // brings back to this rank, `total` the group's size and `step` this rank's position in it
  // (the expert slice its tokens are routed to).
};

// Whether a weight-sized value of this split is one slice of the layer's flat array that a
// ZeRO shard divides further (a tensor-parallel part or an experts' slice).
inline bool isSlice(Split s) {
  return s == Split::Part || s == Split::Experts;
}
// Whether an activation or gradient of this split holds dispatched tokens (at their experts);
// or a mixture-of-experts layer's tokens at its router or at its experts (each token's top-k
// copies, as an all-to-all moves them).
inline bool atExperts(Split s) {
  return s == Split::Dispatched || s == Split::ExpertOutput;
}
inline bool isTokens(Split s) {
  return s == Split::Routed || atExperts(s);
}

// Real data a backend computes for a value (the cpu or cuda backend's tensors), and the
// bytes it takes there; shared by the copies of a value (backend/Payload.h).
struct Payload : boost::intrusive_ref_counter<Payload, boost::thread_unsafe_counter> {
  std::shared_ptr<const void> data;
  int64_t bytes = 0;
};

// Values are counted by boost::intrusive_ptr: the count is the value's first 4 bytes, not a
// separate control block, and not atomic (a run's values live on the simulator's thread:
// rt/Abi.cpp and the backends call it from that thread only). The fields are in an order that
// leaves no padding unused (the memory's flag, sequenceGathered, embeddingCopy, tier and step fill it), and its sets
// are counted the same way (sim::SetPtr): a value is 80 bytes, one allocation of jemalloc's 80-byte class (it was 128
// with std::shared_ptr's control block and 16-byte pointers; fsdp on 1024 ranks x 32 layers holds 99 328 values at its
// end). Value.cpp asserts the size.
struct Value : boost::intrusive_ref_counter<Value, boost::thread_unsafe_counter> {
  Kind kind = Kind::Activation;
  bool forged = false;   // depends on a gradient made up with fake_grad
  bool poisoned = false; // the result of a failed operation: checks on it stay silent
  Split split = Split::None;
  cost::Producers made; // the events of its rank that made it (none: made at no cost)
private:
  bool memoryIsReal_ = false; // memory(): which of Number's two its bits are

public:
  // An activation (or its gradient) all-gathered whole from sequence shards: the layer whose
  // forward it enters runs its norms, dropout and residual adds on its shard (sequence
  // parallelism), and so does that layer's backward (Rank::sequenceParallelIn).
  // (In the padding before memoryBits_.)
  bool sequenceGathered = false;
  // A weight-sized value (weight, gradient, optimizer state) of the last layer on a rank that
  // holds no first layer: under a transformer with tied embeddings it also holds the output
  // layer's own copy of the word embedding (Megatron-LM's pipeline-parallel tied embedding;
  // sim/Bytes.h). (In the padding before memoryBits_.)
  bool embeddingCopy = false;
  Tier tier = Tier::Device; // (in the padding before memoryBits_)
  // Weights, optimizer states: the optimizer step; Dispatched and ExpertOutput values: see
  // Split. (32 bits, in the last of the padding before memoryBits_.)
  int32_t step = 0;

private:
  uint64_t memoryBits_ = 0;

public:
  int64_t layer = 0;
  SetPtr shards;     // weights, optimizer states, weight gradients
  int64_t total = 1; // number of shards of the whole
  SetPtr batches;    // activations, gradients
  // Real data, when a backend computes it; the sim backend itself never looks inside.
  boost::intrusive_ptr<const Payload> payload;

  // Units of memory (puzzle model): weights, optimizer states and weight gradients take
  // (|shards| / total) * 512 * 512 as a double; activations and activation gradients
  // |batches| * 512 * 256 as an integer. Computed once, by makeValue.
  Number memory() const { return Number::fromPayload(memoryBits_, memoryIsReal_); }
  void setMemory(Number m) {
    memoryBits_ = m.payload();
    memoryIsReal_ = !m.isInteger();
  }
  Number computeMemory() const;
  int64_t payloadBytes() const { return payload ? payload->bytes : 0; }
  bool complete() const { return static_cast<int64_t>(shards->size()) == total; }
  // "a weight of layer 2 (shards {0} of 4, step 0)".
  std::string describe() const;
  // A weight's, optimizer state's or weight gradient's slices: "shards {1} of 4", or
  // "tensor-parallel part {1} of 4" (a part, or a part's shard).
  std::string slices() const;

  // Values come from their thread's list of freed ones (Value.cpp).
  static void *operator new(size_t bytes);
  static void operator delete(void *block, size_t bytes) noexcept;
};

using ValuePtr = boost::intrusive_ptr<const Value>;

// Shards `shards` of `total` as one slice of a coarser split, when they are one aligned run
// of slices: {2, 3} of 4 is slice 1 of 2, {0, 1} of 2 is slice 0 of 1 (the whole); a
// weight's shards and tensor-parallel parts are equal slices of one flat array, so a ZeRO
// shard of part p of t is slice p·n + s of t·n. {-1, 0} when they are not.
std::pair<int64_t, int64_t> singleSlice(const IntSet &shards, int64_t total);
// Whether slices `a` of `aTotal` cover every element slices `b` of `bTotal` hold (slices of
// different counts compared as parts of the one flat array).
bool slicesCover(const IntSet &a, int64_t aTotal, const IntSet &b, int64_t bTotal);

// The one way values are made: fixes the value's memory and shares it.
ValuePtr makeValue(Value v);

// The empty set, and {v} for small v >= 0, interned: shared by every value with that set (a
// weight's shard, a gradient's, a micro-batch) rather than allocated for each.
SetPtr emptySet();
SetPtr singleSet(int64_t v);
// `s`, shared (interned when it is empty or has one element).
SetPtr setOf(IntSet s);

} // namespace schedc::sim
