// Events — what a run of a schedule records and reports, as plain data: the model's size, a
// rank's logged events (the rows of the reference traces), what its sends, receives and
// collectives moved (for export), and the figures of each rank and of the run. Made by the
// engine (engine/Rank.h), read by the reports (report/) and by export.
#pragma once

#include "cost/Placement.h"
#include "diagnostics/Diagnostics.h"
#include "memory/ChunkedLog.h"
#include "numbers/Number.h"
#include "ops/Operations.h"
#include "sim/Bytes.h"
#include "sim/IntSet.h"
#include "sim/Sites.h"
#include "sim/Value.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace schedc::sim {

struct Model {
  int64_t layers = 1;
  int64_t batches = 1;
  int64_t ranks = 1;
};

struct ArrayInfo {
  std::string name;
  std::optional<Kind> kind; // unknown until run time for arrays only ever received into
};

// What a send or a receive moved (recorded with Options::recordTransfers): the rank's
// event of it, the other rank and the value.
struct Transfer {
  size_t event = 0;
  int64_t peer = 0;
  bool sent = false; // a send (else a receive)
  Kind kind = Kind::Activation;
  int64_t layer = 0;
  SetPtr batches;
};

// An overlapped pair's events (recorded with Options::recordTransfers): first side from
// `first`, second side from `second`, up to `end` (exclusive).
struct PairSpan {
  size_t first = 0, second = 0, end = 0;
};

// What an event is (EventKind, support/ops/Operations.def): its name (eventName) is what the
// reference traces and the CSV call it; isComputeEvent and isCommunicationEvent its class.

// One logged event of a rank (the rows of the reference traces): what it is, where it runs
// in time (placed as it is logged: cost/Placement.h), and the memory the rank held when it
// was logged. Kept only when something reads them after the run (Options::keepEvents); the
// report's figures are kept as the rank logs (Rank::figures).
struct Event : cost::Work, cost::Placed {
  SetPtr batches; // null: none
  Number memory;
  double bytes = 0;   // bytes held then under the byte model (predicted)
  Sites::Id site = 0; // where in the source (World::site)
  int32_t flow = -1;  // a send and the receive of its message share it
};

// A rank's events, in the order it logged them (chunks of 32).
using EventLog = memory::ChunkedLog<Event>;

// A collective a rank called (recorded with Options::recordTransfers): its event, what it
// combined (a value kind, a layer) and over which ranks; and a weight the rank freed, at
// the number of events it had logged then (so before event `before`). Export reads FSDP's
// UNSHARD, RESHARD and REDUCE_GRAD from them.
struct CollectiveCall {
  size_t event = 0;
  CollectiveKind kind = CollectiveKind::AllReduce;
  Kind valueKind = Kind::Weight;
  int64_t layer = 0;
  SetPtr group;
};
struct WeightFreed {
  size_t before = 0;
  int64_t layer = 0;
  bool whole = false; // every shard (a gathered weight), not a shard of it
};

// A rank's figures, kept as it logs its events (the samples of memory are the events').
struct RankFigures {
  int64_t rank = 0;
  size_t events = 0;
  Number lastStart, end, peakMemory, peakTime;      // peakTime: the start of the first event at peakMemory
  double computeTime = 0;                           // forward and backward
  double computeStart = 1e300, computeEnd = -1e300; // of its first and last forward or backward
  double communicationVolume = 0;                   // units moved by its collectives and sends
  double communicationBytes = 0;                    // the same in bytes, where the cost model prices them
  int64_t peakInFlight = 0;                         // most micro-batches with activations held at once
  int64_t peakActivationMemory = 0;                 // most memory in activations and activation gradients
  double peakBytes = 0;                             // most bytes held under the byte model (predicted)
  ByteShares peakShares{};                          // what they were at the first moment held
  double peakHostBytes = 0, peakNvmeBytes = 0;      // most bytes held in host memory, on NVMe (predicted)
  double flops = 0, modelFlops = 0;                 // as the cost model counts them (cost::CostModel::flops)
  std::array<double, cost::kStreams> busy{};        // the time its events take on each stream
};

// The reported figures, computed as the original library computes them.
struct Report {
  Number timesteps; // largest start time of a rank's last event
  Number makespan;  // largest end time of a rank's last event
  Number maxMemory; // first strictly largest memory sample, ranks in order
  int64_t maxMemoryRank = 0;
  Number maxMemoryTime;
  double maxBytes = 0; // the largest rank's peakBytes, the first such rank
  int64_t maxBytesRank = 0;
  size_t events = 0;
  std::vector<RankFigures> ranks;
  // The idle share of the forward/backward phase: 1 - (forward and backward time of all
  // ranks) / (ranks x (last forward/backward end - first forward/backward start)).
  double bubble = 0;
  double communicationVolume = 0, communicationBytes = 0;
  double flops = 0, modelFlops = 0; // of all ranks
};

} // namespace schedc::sim
