// WorldOptions — what a World is made with: its limits, its cost and byte models, which
// events it keeps, how its sends and receives meet and the threads its ranks run on.
#pragma once

#include "cost/CostModel.h"
#include "engine/Budget.h"
#include "engine/Fiber.h"
#include "sim/Bytes.h"
#include "sim/PointToPoint.h"
#include "sim/TagMeaning.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace schedc::sim {

// The end-of-step warnings a run is told to leave unsaid (--no-warn=leftover,unreceived), for
// a schedule that holds values or leaves messages on purpose. Errors are never silenced, nor
// is the warning about a forged gradient.
struct SilencedWarnings {
  bool leftover = false;   // activations or gradients still held at the end of the step
  bool unreceived = false; // a message sent and never received
  bool silences(std::string_view code) const {
    return (code == "leftover" && leftover) || (code == "unreceived" && unreceived);
  }
};
// --threads: the threads a run's ranks run on (Options::threads); kAutoThreads lets the
// run choose from the processors the process may use and the ranks it has.
constexpr unsigned kAutoThreads = 0;
constexpr unsigned kMaxThreads = 256;

// What the command line says of a run — schedc's and a compiled program's alike, each option
// read by one reader (run/SharedOptions.h) — passed down whole, never field by field.
struct RunSettings {
  // --max-steps, --time-limit, --memory-limit (Limits{}: no memory limit; the command line's
  // default is defaultLimits(): SharedOptions).
  Limits limits;
  // What places the events in time (cost/CostModel.h): --cost-model, or the hardware cost
  // model of --model and --hardware (run/CostChoice.h's resolveCostModel).
  const cost::CostModel *costModel = &cost::puzzleCost();
  // The model whose bytes are predicted beside the puzzle's units (--hidden, --tokens,
  // --optimizer, --precision).
  ByteModel bytes;
  SilencedWarnings silenced; // --no-warn
  // The share of an overlapped pair's shorter side that the pair hides (--overlap;
  // cost::RankClock::placePair): 0, the default, claims no overlap.
  double overlapHidden = 0;
  // Threads to run the ranks on (--threads; engine/Parallel.cpp): 1, or more for a run whose
  // caller reruns it on one thread when World::diverged says so; kAutoThreads: autoThreads's
  // choice. One with keepEvents or recordTransfers (their logs are in the order of one
  // thread).
  unsigned threads = 1;
};

// A World's options: the run's settings, and what the run's caller decides.
struct Options : RunSettings {
  SourceRange scheduleAt; // where model-level problems are reported
  // Keep every event for reading after the run (World::events: a trace, a timeline, the
  // events' CSV). Without, a rank keeps only its figures and each event's end (8 bytes and a
  // bit instead of 128 bytes).
  bool keepEvents = true;
  // Record what each send and receive moves (Rank::transfers; `schedc export`).
  bool recordTransfers = false;
  // What the message of a tag carries, for messages about it ("" or empty: the tag alone);
  // an imported PyTorch file's tags name a stage and micro-batch (ImportSchedule.h).
  TagMeaning tagMeaning;
  // Each rank's fiber stack: the default, or a shallow program's (RunSetup::stackBytes).
  size_t stackBytes = kFiberStackBytes;
  static constexpr int64_t kRanksPerThread = 64;
  // A rank that meets an error again stops (Rank::error). Off where a real backend computes
  // the run (rt/ComputeRun.cpp): its peers would wait in MPI for what it no longer sends.
  bool stopRanksAtRepeatedErrors = true;
  // How sends and receives meet (sim/PointToPoint.h): --p2p, else the schedule's own. An
  // ordered run is on one thread: the ranks' streams are matched against each other without
  // locks.
  PointToPoint p2p = PointToPoint::Tagged;
};

// The processors this process may run on (its affinity; `taskset` and cgroup cpusets narrow it).
unsigned processors();
// The threads --threads=auto gives a run of `ranks`: one a processor, where each has
// Options::kRanksPerThread ranks or more; one where the address space is limited.
int64_t autoThreads(int64_t ranks);

} // namespace schedc::sim
