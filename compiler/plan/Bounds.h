// Bounds — lower bounds of a configuration's step and of its fullest rank's peak bytes, from
// the same cost and byte models the check uses, in microseconds instead of a run. Sound for
// every stdlib family (docs/plan.md has the proofs):
//   step  >= for every stage s whose first layer is d: head + max(all, undeferred + tail),
//            times (1 - --overlap), where all = its layers' forwards and backwards (the
//            cheaper of a whole backward and its two halves) for every micro-batch of its
//            replica; undeferred = the same without the weight halves a zero-bubble family
//            may defer; head = one micro-batch's forwards through layers 0 .. d-1; tail =
//            its backwards (input halves, for a zero-bubble family) through them. A rank
//            runs one compute event at a time; nothing on stage s can start before a
//            micro-batch has come through the layers before d, on other stages one after
//            another; after stage s's last backward that is not a deferred weight half, that
//            micro-batch's gradient still goes back through them (tensor-parallel
//            collectives on the compute's critical path are in the events' lengths as the
//            model charges them). For 1F1B with free messages: its makespan, (m+p-1)(F+B)/p.
//   bytes >= the most of, over the stages: its weights and optimizer state (1/d of them
//            where the family shards them) with one micro-batch's activations through all
//            its layers (a data-parallel rank's share, as one batch), and the fp32 logits
//            where its last layer is the model's: held when its last chunk's backward
//            starts (its forwards of that micro-batch are done, none of its backwards);
//            where the family keeps every whole gradient until its updates (all but ZeRO-2,
//            ZeRO-3 and FSDP), its state with those gradients, and for a stage of one chunk
//            accumulating whole backwards over two or more micro-batches (GPipe, 1F1B,
//            Megatron without interleaving) with the last micro-batch's activations as
//            well (the first micro-batch's backward made every gradient); the first rank's state
//            with the chunk forwards its family's order has run when its first backward
//            starts (plan/Space.h's Order), each holding its lightest chunk's activations;
//            and, where its backwards are whole and accumulate, its state with every gradient
//            and the chunk forwards in flight once all gradients are made (1F1B's steady
//            state: its warm-up and one more, from the backward after chunk 0's first, where
//            the steady state lasts that long; GPipe's drain: m - 1 at its second backward).
// A mixture-of-experts layer split over an expert-parallel group of e (moe) counts both
// sides' events (the experts' on the group's micro-batches, one a member, as the sim logs
// them: not a whole layer's pass, whose GEMMs may be slower per FLOP), its dense part's
// parameters and 1/e of its routed experts', and a whole layer's activations (the dense
// part's and the dispatched tokens' add up to them under balanced routing).
// Messages, all-to-alls, activation gradients and the tied embedding's copy are left out: a
// bound.
#pragma once

#include "cost/HardwareCost.h"
#include "plan/OrderSearch.h"
#include "plan/Space.h"
#include "sim/Bytes.h"

namespace schedc::plan {

struct Bounds {
  double seconds = 0;
  double bytes = 0;
};

// `overlapHidden`: --overlap, the share of an overlapped pair's shorter side hidden.
Bounds boundsOf(const Candidate &candidate, const cost::HardwareCost &cost, const sim::ByteModel &bytes,
                double overlapHidden);

// What the check's run depends on of a model variant, layer by layer: every compute event's
// length and FLOPs (whole backward and halves) and the activations kept. Two variants with
// the same fingerprint (recomputation that changes nothing, as selective recomputation
// under FlashAttention in the cost model) run the same.
std::vector<double> fingerprintOf(const cost::HardwareCost &cost, const sim::ByteModel &bytes);

// The slowest of a pipeline's messages between neighbouring stages (one micro-batch's
// activation, stage s's tensor-parallel group's first accelerator to stage s + 1's): what a
// searched order's clock charges for each.
double stageMessageSeconds(const Candidate &candidate, const cost::HardwareCost &cost);

// Each stage's F, B (input half) and W (weight half) of one micro-batch, as the check times
// them, and the bytes they hold, as it counts them: what a searched order is searched with.
std::vector<StageCosts> stageCostsOf(const Candidate &candidate, const cost::HardwareCost &cost,
                                     const sim::ByteModel &bytes);

} // namespace schedc::plan
