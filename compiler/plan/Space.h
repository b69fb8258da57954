// Space — the configurations `schedc plan` searches (docs/plan.md). A configuration is a
// stdlib schedule family and a layout of the accelerators: tensor parallelism t spelled in the
// model (`tensor_parallel`, within a node), p pipeline stages and d data-parallel replicas
// (the schedule's ranks are p x d, each one accelerator of a t-group), the micro-batch size
// b (`micro_batch`) and the micro-batches B / b of the global batch B, sequence parallelism
// (t > 1), recomputation (none, selective, full), and per family its own choices: the model
// chunks of an interleaved schedule, Megatron-LM's distributed optimizer, the expert-parallel
// group of a mixture-of-experts model's experts (moe: e of the d replicas share each layer's
// routed experts, one slice each; at t = 1, since the cost model splits no experts' side
// by tensor parallelism).
// Invariants: every configuration enumerate() returns uses all the accelerators (t x p x d
// = N) and the whole global batch (d divides B, b divides B / d); it meets the shape rules
// of its family's file (its `require`s: equal chunks of layers, enough micro-batches), so
// that a refusal by the schedule is a finding, not noise; no two configurations are the same
// run under two names (megatron with one replica is 1f1b, or interleaved with its chunks,
// where those are searched: plan_claims.py checks that they run the same).
#pragma once

#include "cost/Transformer.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::plan {

// How a family lays its ranks out.
enum class Layout : uint8_t {
  Pipeline,     // p stages, one replica (ranks = p, p >= 2)
  Mesh,         // d replicas of p stages (megatron: dp x stage)
  DataParallel, // d replicas of the whole model (p = 1), each its share of the micro-batches as one batch
  ExpertMesh,   // d replicas of p stages, whose layers' routed experts groups of e of them split (moe:
                // stage x dp x ep, dp = d / e)
};

// What the first rank has run when its first backward starts (its file's warm-up): every
// forward of the step (GPipe; data parallelism, whose share is one batch); 1F1B's and
// interleaved 1F1B's warm-up, at least (p - 1) + (v - 1)p chunk forwards, and one more; two
// chunks a rank in a V (ZB-V, DualPipeV), 2p - 1 forwards of its first chunk; an order the
// plan searches (plan/OrderSearch.h), at least one forward.
enum class Order : uint8_t { FillDrain, OneFOneB, VShape, Searched };

struct Family {
  const char *name; // the stdlib file's stem, and --schedules's name for it
  Layout layout;
  Order order = Order::OneFOneB;
  bool chunks = false;          // `chunks` model chunks per stage (interleaved: >= 2; megatron: >= 1)
  bool splitsBackward = false;  // runs a backward's weight half apart, where it may wait (zero bubble)
  bool keepsGradients = true;   // holds every layer's whole gradient at once before its updates
  bool distributed = false;     // Megatron-LM's distributed optimizer, a choice (megatron)
  bool buckets = false;         // DDP's all-reduce buckets of `bucket` layers, a choice (ddp)
  bool shardsWeights = false;   // ZeRO-3 / FSDP: a rank keeps 1/d of the weights between uses
  bool shardsOptimizer = false; // ZeRO-1..3 / FSDP: 1/d of the optimizer state
  // Memory tiers: kept off the device between uses (ZeRO-Offload: the optimizer state;
  // ZeRO-Infinity: the weights and activation checkpoints too).
  bool offloadsOptimizer = false, offloadsWeights = false, offloadsActivations = false;
  int64_t minBatchesPerStage = 1; // micro-batches at least `this` x p (dualpipev: 2)
  bool minPerPipeline = false;    // that many in each replica's share (dualpipev_moe's pipelines)
};

// Every family, in the order the table breaks ties by; one by name (null: none).
const std::vector<Family> &families();
const Family *findFamily(const std::string &name);
// "gpipe, 1f1b, ...": for messages and help.
std::string familyNames();

// The model's shape, as a layout of it sees it: settings the model's own keys fix.
struct Settings {
  int64_t tensorParallel = 1; // t
  int64_t microBatch = 1;     // b
  bool sequenceParallel = false;
  cost::Recompute recompute = cost::Recompute::None;
  // --model-set texts for these where they differ from `model`'s (the user's model, its
  // file's or preset's values with the user's --model-set over them) and the user did not fix
  // them: what a candidate's command line adds to the user's.
  std::vector<std::string> modelSettings(const std::vector<std::string> &fixedByUser, const Settings &model) const;
  bool operator<(const Settings &o) const;
};

struct Candidate {
  const Family *family = nullptr;
  Settings settings;
  int64_t stages = 1;   // p
  int64_t replicas = 1; // d
  int64_t batches = 1;  // micro-batches of the step, B / b
  int64_t chunks = 1;
  int64_t experts = 1;     // e, the expert-parallel group (moe); 1 elsewhere
  int64_t denseLayers = 0; // moe: the model's first layers without routed experts (`dense_layers`)
  bool distributed = false;
  int64_t bucket = 1; // ddp: layers a bucket of all-reduces (`bucket`); 1 elsewhere
  // A searched order's activation budget: stage s holds at most max(1, budget - s)
  // micro-batches (budget p: 1F1B's own, p - s). 0 for the stdlib families.
  int64_t budget = 0;
  // Filled by the search (plan/Bounds.h): lower bounds of the step (seconds) and of the
  // fullest rank's peak bytes, and the index of the model variant that times it.
  double secondsBound = 0, bytesBound = 0;
  size_t model = 0;

  int64_t ranks() const { return stages * replicas; }
  bool vShape() const { return family->order == Order::VShape; }
  bool searched() const { return family->order == Order::Searched; }
  // Stage s's layers, chunk by chunk ([begin, end) each, in the order its forwards reach
  // them): layers sL/p to (s + 1)L/p (p = 1: every layer); interleaved, chunks s, s + p,
  // s + 2p, ... of L/(pv) layers; in a V, chunks s and 2p - 1 - s of L/2p.
  std::vector<std::pair<int64_t, int64_t>> stageChunks(int64_t stage, int64_t layers) const;
  // The schedule's -D parameters (without `layers`: the model's; none more for a searched
  // order, whose file fixes its ranks and micro-batches).
  std::map<std::string, int64_t> defines() const;
  // "megatron t=8 p=8 d=1 v=3 b=1 sp selective": one line of the table.
  std::string describe() const;
};

// What the user asks: the accelerators, the global batch (sequences), the model's shape and
// what of it is fixed, the families allowed.
struct Problem {
  int64_t accelerators = 0, globalBatch = 0;
  int64_t perNode = 1; // accelerators in a node: t divides it (tensor parallelism stays in a node)
  int64_t layers = 0;
  int64_t modelExperts = 0; // the model's routed experts (0: a dense model, no expert parallelism)
  int64_t denseLayers = 0;  // its first layers without them
  std::vector<const Family *> families;
  // Dimensions the user's --model-set fixed (then the search keeps them).
  std::optional<int64_t> tensorParallel, microBatch;
  std::optional<bool> sequenceParallel;
  std::optional<cost::Recompute> recompute;
};

// Every configuration of `problem`, in a fixed order.
std::vector<Candidate> enumerate(const Problem &problem);

} // namespace schedc::plan
