// World — the sim backend: one simulated run of a schedule on every rank. It is the semantic
// core of schedc: `schedc check` interprets the IR against it and compiled schedules call it
// through the runtime ABI, so both report the same figures and the same errors. A World owns
// the ranks (each runs on its own Fiber), their storage and event logs, collective matching
// and point-to-point channels; it detects deadlock, checks the final model, and computes the
// reported figures. Time is not its business: each rank tells its clock what every event is
// and what it waits for, and the cost model's rules place it (cost/Placement.h).
//
// `Rank` is the per-rank API: every operation of the language, storage, and errors. An
// operation that fails reports an error (aggregated across ranks by source location and
// kind) and returns a *poisoned* value, so the run goes on, more errors can be found, and
// nothing that depends on the failed value reports again.
#pragma once

#include "cost/Placement.h"
#include "diagnostics/Diagnostics.h"
#include "diagnostics/InternalError.h"
#include "memory/ChunkedLog.h"
#include "sim/Budget.h"
#include "sim/Bytes.h"
#include "sim/Channels.h"
#include "sim/DenseWindow.h"
#include "sim/EndTally.h"
#include "sim/Fiber.h"
#include "sim/Pair.h"
#include "sim/PointToPoint.h"
#include "sim/Recompute.h"
#include "sim/SharedOptions.h"
#include "sim/Sites.h"
#include "sim/SpinLock.h"
#include "sim/Storage.h"
#include "sim/TagMeaning.h"
#include "sim/Value.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace schedc::sim {

struct Model {
  int64_t layers = 1;
  int64_t batches = 1;
  int64_t ranks = 1;
};

// A note for a diagnostic.
inline Diagnostic note(SourceRange at, std::string message) {
  return Diagnostic{Severity::Note, at, std::move(message), {}};
}

struct ArrayInfo {
  std::string name;
  std::optional<Kind> kind; // unknown until run time for arrays only ever received into
};

struct Options {
  Limits limits;          // statements, seconds and memory the run may take (Limits{}: no memory limit)
  SourceRange scheduleAt; // where model-level problems are reported
  // What places the events in time (cost/CostModel.h).
  const cost::CostModel *costModel = &cost::puzzleCost();
  // The model whose bytes are predicted beside the puzzle's units.
  ByteModel bytes;
  // Keep every event for reading after the run (World::events: a trace, a timeline, the
  // events' CSV). Without, a rank keeps only its figures and each event's end (8 bytes and a
  // bit instead of 128 bytes).
  bool keepEvents = true;
  // Record what each send and receive moves (Rank::transfers; `schedc export`).
  bool recordTransfers = false;
  SilencedWarnings silenced; // --no-warn
  // The share of an overlapped pair's shorter side that the pair hides (--overlap;
  // cost::RankClock::placePair): 0, the default, claims no overlap.
  double overlapHidden = 0;
  // What the message of a tag carries, for messages about it ("" or empty: the tag alone);
  // an imported PyTorch file's tags name a stage and micro-batch (ImportSchedule.h).
  TagMeaning tagMeaning;
  // Each rank's fiber stack: the default, or a shallow program's (RunSetup::stackBytes).
  size_t stackBytes = kFiberStackBytes;
  // Threads to run the ranks on (sim/Parallel.cpp): 1, or more for a run whose caller
  // reruns it on one thread when World::diverged says so; kAutoThreads (SharedOptions.h):
  // autoThreads's choice. One with keepEvents or recordTransfers (their logs are in the
  // order of one thread).
  unsigned threads = 1;
  static constexpr int64_t kRanksPerThread = 64;
  // A rank that meets an error again stops (Rank::error). Off where a real backend computes
  // the run (rt/ComputeRun.cpp): its peers would wait in MPI for what it no longer sends.
  bool stopRanksAtRepeatedErrors = true;
  // How sends and receives meet (sim/PointToPoint.h). An ordered run is on one thread: the
  // ranks' streams are matched against each other without locks.
  PointToPoint p2p = PointToPoint::Tagged;
};

// The processors this process may run on (its affinity; `taskset` and cgroup cpusets narrow it).
unsigned processors();
// The threads --threads=auto gives a run of `ranks`: one a processor, where each has
// Options::kRanksPerThread ranks or more; one where the address space is limited.
int64_t autoThreads(int64_t ranks);

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
  int64_t peakInFlight = 0;                         // most micro-batches with activations held at once
  int64_t peakActivationMemory = 0;                 // most memory in activations and activation gradients
  double peakBytes = 0;                             // most bytes held under the byte model (predicted)
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
  double communicationVolume = 0;
  double flops = 0, modelFlops = 0; // of all ranks
};

class World;
struct Lane;

class Rank {
public:
  int64_t id() const { return id_; }
  const Model &model() const;
  size_t eventCount() const { return figures_.events; }
  const RankFigures &figures() const { return figures_; }
  // The bytes of real data held at event `event` (-1: not measured; see measurePayloads).
  int64_t measuredAt(size_t event) const { return event < measured_.size() ? measured_[event] : -1; }
  // Every value this rank holds in storage now.
  void forEachHeld(const std::function<void(const Storage::Held &)> &fn) const { storage_.forEach(fn); }
  // Also record, at every event, the bytes of real data held (the cpu backend); turned on
  // before the rank logs its first event.
  void measurePayloads(bool on) { measure_ = on; }
  // Its sends and receives, in order (only with Options::recordTransfers).
  const std::vector<Transfer> &transfers() const { return transfers_; }
  // Its overlapped pairs, in order (likewise).
  const std::vector<PairSpan> &pairs() const { return pairs_; }
  // Its collectives and the weights it freed, in order (likewise).
  const std::vector<CollectiveCall> &collectiveCalls() const { return collectiveCalls_; }
  const std::vector<WeightFreed> &weightsFreed() const { return weightsFreed_; }

  // ---- Storage ----
  void store(uint32_t array, const SlotIndex &index, ValuePtr v, SourceRange at);
  ValuePtr read(uint32_t array, const SlotIndex &index, SourceRange at);
  // Whether this rank holds a value in the slot (`held(...)`: no error either way).
  bool holds(uint32_t array, const SlotIndex &index) const;
  void free(uint32_t array, const SlotIndex &index, SourceRange at);

  // ---- Operations (each checks its inputs; see docs/checks.md) ----
  // Shard `shard` of `of` (ZeRO), or tensor-parallel part `part` of `parts`.
  std::pair<ValuePtr, ValuePtr> load(SourceRange at, int64_t layer, int64_t shard, int64_t of, int64_t part = 0,
                                     int64_t parts = 1);
  ValuePtr input(SourceRange at, const IntSet &batches);
  ValuePtr forward(SourceRange at, int64_t layer, const ValuePtr &input, const ValuePtr &weight);
  // backward_input and backward_weight (zero-bubble schedules) each compute one of the two
  // results and take half of backward's time; `part` says which (the other is poisoned).
  enum class BackwardPart { Both, Input, Weight };
  std::pair<ValuePtr, ValuePtr> backward(SourceRange at, int64_t layer, const ValuePtr &input, const ValuePtr &grad,
                                         const ValuePtr &weight, BackwardPart part = BackwardPart::Both);
  ValuePtr loss(SourceRange at, const ValuePtr &input);
  std::pair<ValuePtr, ValuePtr> update(SourceRange at, int64_t layer, const ValuePtr &grad, const ValuePtr &weight,
                                       const ValuePtr &opt);
  ValuePtr addGrad(SourceRange at, const ValuePtr &a, const ValuePtr &b);
  ValuePtr fakeGrad(SourceRange at, int64_t layer, const IntSet &batches);
  // Shard `shard` of `of` of a complete weight, optimizer state or weight gradient (ZeRO-1/2:
  // keep a slice of a full value). No event: taking a slice takes no time.
  ValuePtr shard(SourceRange at, const ValuePtr &v, int64_t shard, int64_t of);
  // `group` lists the participating ranks in order; it must contain this rank.
  ValuePtr collective(SourceRange at, CollectiveKind kind, const ValuePtr &v, SetPtr group);
  ValuePtr collectiveInput(SourceRange at, CollectiveKind kind, const ValuePtr &v);
  // Messages are matched as Options::p2p says (sim/PointToPoint.h): per (source, tag), first
  // in first out, or per pair in the order they were sent; tags are 0 to kMaxTag (the least
  // upper bound MPI guarantees).
  static constexpr int64_t kMaxTag = 32767;
  void send(SourceRange at, int64_t to, const ValuePtr &v, int64_t tag = 0);
  ValuePtr recv(SourceRange at, int64_t from, int64_t tag = 0);
  // `post_recv`: a receive posted here (PyTorch's irecv), taken by the next `recv` of the
  // same source and tag. Under ordered point-to-point this is its place on the rank's
  // stream; under tagged it changes nothing.
  void postRecv(SourceRange at, int64_t from, int64_t tag = 0);
  // Whether a message to or from `peer` with `tag` is valid (send and recv report why not).
  bool canExchange(int64_t peer, int64_t tag) const;

  // ---- Overlapped pairs (`overlap { first } with { second }`) ----
  enum class PairPhase { Begin, Second, End };
  // Opens a pair, turns to its second side, or closes it: the two sides run one after the
  // other here (values, checks, memory), and their events are placed in time as one block
  // when the pair closes (cost::RankClock::placePair). A side holds computations only, and
  // the two sides share no storage slot (each an error where it happens).
  void overlap(SourceRange at, PairPhase phase);
  // `group { ... }` begins (true) or ends: the sends and posted receives between are one
  // group, whose operations with one peer complete together under ordered point-to-point
  // (sim/Channels.h); under tagged a group changes nothing.
  void group(SourceRange at, bool begin);
  // One of the rank's operations in `group` completed (0: none); the last wakes a receive
  // of the group waiting for it.
  void completedInGroup(uint32_t group);

  // ---- Mesh ----
  // Lays the ranks out on a mesh; false (after a fatal error) if it does not fit.
  bool declareMesh(SourceRange at, const std::vector<std::string> &names, const std::vector<int64_t> &sizes,
                   const std::vector<SourceRange> &sizeAt);
  int64_t axisCoord(size_t axis, SourceRange at);
  int64_t axisSize(size_t axis, SourceRange at);
  // The rank at mesh coordinates `coords` (one per axis); a fatal error if one is off the mesh.
  int64_t rankAt(const std::vector<int64_t> &coords, SourceRange at);
  // The ranks that share every coordinate but `axis` with this one.
  SetPtr axisGroup(size_t axis, SourceRange at);
  // Every rank: the default group of collectives.
  const SetPtr &allRanks() const;
  // Ranks lo .. hi - 1 as a group (`group = a..b`; the caller bounds its size), the run's one
  // set of them (World::groupSet).
  SetPtr rangeGroup(int64_t lo, int64_t hi);

  // ---- Errors and control ----
  // An error in the schedule; `code` groups the same problem on many ranks into one report.
  void error(SourceRange at, const char *code, std::string message, std::vector<Diagnostic> notes = {});
  bool badRoute(SourceRange at, bool sending, int64_t peer, int64_t tag);
  void warning(SourceRange at, const char *code, std::string message);
  // An error after which the run cannot go on (a limit, a bad argument to the runtime).
  void fatal(SourceRange at, std::string message);
  // `require(cond, "message")`: where it does not hold, the run stops with the message
  // (naming this rank unless the condition is the same on every rank).
  void require(SourceRange at, bool holds, bool sameOnEveryRank, const std::string &message);
  // True once the run is being abandoned, or this rank has met an error a second time (a
  // loop's next iteration: error() stops it there): every call returns at once, the caller
  // unwinds.
  bool cancelled() const;
  // Counts one executed statement; false (after a fatal error) once a resource limit is
  // reached (Options::limits) or the run is being abandoned.
  bool step(SourceRange at);
  // The run cannot go on for want of a resource that no option raises (`why` says which and
  // what to change): it stops at `at`, and the schedule is not judged (exit 6).
  void stopForWantOf(SourceRange at, std::string why);

  // `act[3, 0]`: how a storage slot is named in messages.
  std::string slotName(uint32_t array, const SlotIndex &index) const;

private:
  // The run reached the limit the budget names: a fatal error at `at`.
  void stopAtLimit(const SourceRange &at);
  friend class World;
  Rank(World &world, int64_t id, Lane &lane);

  // While blocked: what the rank waits for (for deadlock reports; put in words only then).
  struct Wait {
    SourceRange at;
    int64_t peer = -1;                       // the rank waited on (receives), for cycle detection
    int64_t tag = 0;                         // and the tag of the message
    const void *collective = nullptr;        // the World::Collective waited in, if any
    CollectiveKind kind = CollectiveKind::AllReduce; // and what it is
    SetPtr members{};                        // and its group
    const PostedRecv *post = nullptr;        // the ordered receive waited for, if any
  };
  // "waits here to receive from rank 3", "waits here in allreduce over all ranks for ...".
  std::string waiting() const;
  Wait wait_;

  // Logs an event of `work` that waits for `after` (its operands' makers) and `also`, with
  // the memory held now, and places it in time; returns what waits for its results.
  cost::Producers logEvent(const cost::Work &work, SetPtr batches, SourceRange at, cost::Producers after = {},
                           const cost::AlsoWaits &also = {}, int32_t flow = -1);
  // Counts the event in the rank's figures, with what the rank held when it was logged.
  void addToFigures(const cost::Work &work, const cost::Placed &placed, const HeldSample &held);
  // Records a placed event (Options::keepEvents, measured payloads).
  void keepEvent(const cost::Work &work, const cost::Placed &placed, const HeldSample &held, SetPtr batches,
                 Sites::Id site, int32_t flow);
  // What the rank holds now.
  HeldSample heldNow() const;
  // Inside a pair: notes (first side) or checks (second side) an access to a slot.
  void touchInPair(uint32_t array, const SlotIndex &index, bool writes, SourceRange at);
  // Inside a pair, `what` (a communication) is an error; true if so.
  bool refusedInPair(SourceRange at, const char *what);
  void closePair();
  // A copy of `v` made by `made` (a received message: the sender's value is made by the
  // sender's events).
  ValuePtr madeBy(const ValuePtr &v, cost::Producers made) const;
  // A copy of `v` with copies of the sets only this thread counts (a message to a rank on
  // another thread of a parallel run).
  ValuePtr detached(const ValuePtr &v) const;
  // Ordered point-to-point (sim/OrderedChannels.cpp): a send put on the rank's stream, a
  // receive posted there (kept in Ordered::posted), and a `recv` that waits for its posted
  // receive.
  void issueOrdered(StreamOp op); // on the world's stream of this rank, in its `group` if any
  void sendOrdered(SourceRange at, int64_t to, InFlight message);
  PostedRecv &postOrdered(SourceRange at, int64_t from, int64_t tag);
  ValuePtr recvOrdered(SourceRange at, int64_t from, int64_t tag);
  // Waits (yields the fiber) until `ready()`; returns false if the run was cancelled.
  bool waitUntil(const std::function<bool()> &ready, Wait wait);
  ValuePtr poison(Kind kind, int64_t layer = 0) const;
  bool checkLayer(SourceRange at, const char *op, int64_t layer);
  bool meshReady(SourceRange at);
  bool checkComputeInputs(SourceRange at, const char *op, int64_t layer, const Value &input, const Value &weight);
  // An activation or activation gradient `op` uses must be whole: not a tensor-parallel
  // partial sum. False (reported) if it is one.
  bool checkWhole(SourceRange at, const char *op, int64_t layer, const Value &v);
  // checkWhole's report, out of line.
  [[gnu::noinline, gnu::cold]] void reportNotWhole(SourceRange at, const char *op, int64_t layer, const Value &v);
  // error() with the message `message()` builds (a string, or a string and its notes), out
  // of line: the operations every rank runs keep no message temporaries in their frames,
  // which are on its stack under every wait.
  template <class Message>
  [[gnu::noinline, gnu::cold]] void errorWith(SourceRange at, const char *code, Message message) {
    if constexpr (std::is_convertible_v<decltype(message()), std::string>) {
      error(at, code, message());
    } else {
      auto [text, notes] = message();
      error(at, code, std::move(text), std::move(notes));
    }
  }
  // A read or free of a slot that holds nothing: the error that says why.
  [[gnu::noinline, gnu::cold]] void reportEmptySlot(uint32_t array, const SlotIndex &index, SourceRange at,
                                                    bool freeing);
  bool checkPieces(SourceRange at, int64_t layer, int64_t piece, int64_t count, const char *what);

  World &world_;
  int64_t id_;
  Storage storage_;
  EventLog events_;
  cost::RankClock clock_;
  RankFigures figures_;
  memory::ChunkedLog<int64_t, 9> measured_;     // by event, while measuring payloads
  std::vector<Transfer> transfers_;             // with Options::recordTransfers
  std::vector<PairSpan> pairs_;                 // likewise
  std::vector<CollectiveCall> collectiveCalls_; // likewise
  std::vector<WeightFreed> weightsFreed_;       // likewise
  std::unique_ptr<PendingPair> pair_;           // while running an overlapped pair
  std::unique_ptr<RecomputedBytes> recompute_;  // under a transformer byte model
  // The input `a` of a forward (or, `backward`, of a backward) logged next: told to recompute_.
  void readsInput(const ValuePtr &a, bool backward);
  // At the end of the run: the bytes of recomputed inputs taken off (sim/Recompute.h).
  void settleRecomputedBytes();
  // Per layer: the shards this rank has updated, their shard count, and where (World::site).
  struct Updated {
    SetPtr shards; // the weight's own set, until a second update adds to it; null: none yet
    int64_t total = 0;
    Sites::Id at = 0;
  };
  // By layer (empty until its first update): the layers a rank updates are close together
  // (a stage's, or every layer), 24 bytes each where a tree node took 80 and an update
  // walked five cold nodes.
  NearMap<Updated> updated_;
  bool blocked_ = false;
  bool finished_ = false;
  bool stopped_ = false; // stopped at an error met again (error()): what follows is its echo
  // The message (source, tag) a receive waits for ({-1, 0}: none; a parallel run's under
  // its inbox's lock), and, a parallel run's (sim/Parallel.cpp), queued to run (or running
  // and woken again).
  std::pair<int64_t, int64_t> awaiting_{-1, 0};
  // Ordered: the receives this rank posted and has not taken yet, in the order it posted
  // them, and the one its `recv` waits for (null: none).
  // (Made at the first use: a run of many ranks under tagged keeps 8 bytes a rank for it.)
  struct Ordered {
    std::list<PostedRecv> posted;
    const PostedRecv *awaitingPost = nullptr;
    uint32_t group = 0, groups = 0;                   // the `group` being issued (0: none), and how many began
    std::unordered_map<uint32_t, uint32_t> groupOpen; // a `group`'s operations not completed yet
  };
  std::unique_ptr<Ordered> ordered_;
  Ordered &ordered() {
    if (!ordered_)
      ordered_ = std::make_unique<Ordered>();
    return *ordered_;
  }
  std::atomic<bool> queued_{false};
  Lane *lane_; // the thread's share of the run this rank is in
  bool measure_ = false;
  std::unique_ptr<Fiber> fiber_;
  std::vector<int64_t> meshSizes_, meshStrides_;
  std::vector<std::string> meshNames_;
  std::vector<SetPtr> axisGroups_;
};

class World {
public:
  World(Model model, std::vector<ArrayInfo> arrays, Options options);
  ~World();

  // Runs `body` for every rank, each on its own fiber, until all finish or the run cannot
  // go on (deadlock, a fatal error). Then checks the final model.
  void run(const std::function<void(Rank &)> &body);

  const Model &model() const { return model_; }
  // Every rank, shared, in order: the default group of collectives.
  const SetPtr &allRanks() const { return allRanks_; }
  // " with tag N" and what it carries (Options::tagMeaning), or "" for tag 0.
  std::string withTag(int64_t tag) const;
  // True if every rank ran to its end.
  bool completed() const { return completed_; }
  bool hasErrors() const;
  // True if the final weights depend on a gradient forged with a non-empty fake_grad.
  bool forged() const { return forged_; }
  // True if the run completed, without errors, into a complete model.
  bool correct() const { return completed_ && !hasErrors(); }
  // True if a resource limit (Options::limits) stopped the run: the schedule was not judged.
  bool stoppedAtLimit() const { return stoppedAtLimit_; }
  // Diagnostics in the order they happened, each problem once (with the other ranks it
  // happened on as a note).
  std::vector<Diagnostic> diagnostics() const;
  Report report() const;
  // A rank's events (Options::keepEvents).
  const EventLog &events(int64_t rank) const {
    SCHEDC_ASSERT(options_.keepEvents, "events read after a run that did not keep them");
    return ranks_[static_cast<size_t>(rank)]->events_;
  }
  // The options the run was made with (its cost model, its byte model, ...).
  const Options &options() const { return options_; }

  const Rank &rank(int64_t r) const { return *ranks_[r]; }
  // Where in the source an event or a stored value is (Event::site, Storage::Held::storedAt).
  const SourceRange &site(Sites::Id id) const;
  // True if a run on several threads (Options::threads) met what only a run on one thread
  // reports in a fixed order — an error, a warning, a limit, a deadlock: it stopped, and its
  // results mean nothing; the caller runs the schedule again on one thread.
  bool diverged() const { return diverged_; }
  // Every (sender, receiver) pair a send was made for, the run's point-to-point routes: a
  // real backend that needs a channel per route (the cuda backend's NCCL pairs) makes them
  // before it runs, from a verification run of the same schedule.
  const std::set<std::pair<int64_t, int64_t>> &routes() const { return routes_; }
  // The members (ascending) of every group a collective was called over: the channels of
  // collectives such a backend opens before it runs, likewise.
  std::vector<std::vector<int64_t>> collectiveGroups() const;

private:
  friend class Rank;
  friend struct Lane;
  struct Recorded {
    Diagnostic diag;
    int64_t rank;                    // the rank the message describes (-1: the whole run)
    std::vector<int64_t> otherRanks; // where the same problem happens too
    std::vector<bool> noted;         // by rank: in otherRanks already (a loop repeats a problem)
  };
  // One collective call of a group: the k-th call of every member meets here.
  struct Collective {
    Collective(CollectiveKind k, size_t members)
        : kind(k), kinds(members), inputs(members), at(members), readyAt(members) {
      arrivals.reserve(members);
    }
    // What the member at `position` gets of `of` (`result`, or its lane's copy): the
    // result, or a reduce-scatter's shard of it.
    Value resultFor(size_t position, const Value &of) const;

    CollectiveKind kind; // of the lowest member (what the others must match)
    int64_t layer = -1;
    std::vector<CollectiveKind> kinds; // by position in the group
    std::vector<ValuePtr> inputs;      // by position in the group
    std::vector<SourceRange> at;       // call sites, by position
    // When each member's event could start, by position: taken as it arrives, while its clock
    // is in cache (it logs nothing until the collective completes), folded in group order.
    std::vector<Number> readyAt;
    std::vector<uint32_t> arrivals; // on one thread: positions, in the order the members arrived
    // The members that have arrived (the last completes the call), and kAbandoned once a
    // member of a cancelled run left it before anyone could complete it (World::awaitCall).
    std::atomic<uint32_t> arrived{0};
    static constexpr uint32_t kAbandoned = uint32_t{1} << 31;
    std::atomic<size_t> taken{0}; // members that have taken their results
    bool mismatched = false;
    std::atomic<bool> done{false};
    cost::CallReady ready;          // when every member is ready, once complete
    Value result;                   // once complete; each member makes its own value of it (made by its event)
    std::vector<Value> laneResults; // a parallel run's: `result` for each lane's members (World::forLane)
  };

  struct Group {
    SpinLock lock; // a parallel run's: held while a member finds its call, or the last retires it
    SetPtr members;
    std::vector<uint64_t> calls;      // collectives called so far, by position
    std::deque<Collective> instances; // instances[i] is call number base + i
    uint64_t base = 0;
    int32_t nodes = 0; // the nodes its members are on (cost::CostModel::nodeOf); 0: not yet counted
  };
  // The nodes `g`'s members are on, counted once per group (1 for a model without nodes).
  int32_t nodesOf(Group &g) const;

  // At the end of a one-thread run with blocked ranks: whether they all wait for ranks stopped
  // at their errors (then noted), not in a deadlock of their own.
  bool waitForStoppedRanks();
  // Records a diagnostic; one per (code, location), later ranks noted on the first. True where
  // `rank` has recorded this one before (a loop meets it again).
  bool record(Severity s, SourceRange at, const char *code, std::string message, int64_t rank,
              std::vector<Diagnostic> notes = {});
  // Makes a blocked rank runnable, ahead of every other runnable rank: a rank woken by a
  // completed collective or a message runs while what it shares with its waker is in cache.
  void schedule(Rank &r);
  // The ranks on Options::threads threads (sim/Parallel.cpp); sets diverged_ where the run
  // must be made again on one.
  void runInParallel();
  // A parallel run's schedule(): from any thread, to the rank's own.
  void wake(Rank &r);
  void wake(std::span<Rank *const> ranks); // in order, as schedule() one by one
  // A lane's thread: runs its ranks until no rank of any lane can run.
  void runLane(Lane &lane);
  // A lane's next ranks, from other lanes or after waiting idle; false once the run is over.
  bool refill(Lane &lane);
  // What the last lane to go idle does: wakes the unfinished to unwind, or stops the lanes.
  void settleLanes();
  // In a parallel run, what would be recorded (or stop the run) instead makes it diverge.
  void diverge();
  // The wait of `r` in collective `c` until it is complete; false if the run was cancelled.
  // A member of a cancelled run leaves only where no member can complete the call any more
  // (it marks it abandoned); else it waits for the member completing it, which, on several
  // threads, reads and lets go of every member's input while their ranks stand still.
  static bool awaitCall(Rank &r, Collective &c, uint32_t members, Rank::Wait wait);
  // What the member `self` that completed `c` does: wakes the other `members`.
  void wakeMembers(const Collective &c, const std::vector<int64_t> &members, int64_t self);
  // A set the run keeps to its end, which every rank may hold (the groups, all ranks): in a
  // parallel run not counted at all, and freed with the World.
  SetPtr kept(SetPtr s);
  // A copy of `s` for the ranks of one lane to hold (a collective's result), counted
  // atomically: that lane's thread counts it, and whichever drops it last frees it.
  static SetPtr forLane(const SetPtr &s);
  // In a parallel run, what a completed collective does before it wakes its members: their
  // inputs are let go (each value counted by its own rank's thread only), and each lane's
  // members take their results from a copy of their own (Collective::laneResults).
  void handBack(Collective &c) const;
  void reportDeadlock();
  // Stops the run at a resource limit: one error (of the whole run when `at` is empty).
  void stopAtLimit(SourceRange at, std::string message, int64_t rank);
  // The ranks in turn on this thread (Options::threads 1), from its lane's queue.
  void runOnOneThread();
  // Runs `r` until it waits or ends: starts it (or stops the run where its stack is refused),
  // and lets its stack go once it has ended.
  void runTurn(Rank &r);
  // Tallies what the end-of-step checks look for in `lane`'s ranks (its own thread's, once
  // every rank has finished a run that was not cancelled), into Lane::end.
  void tallyEnd(Lane &lane);
  // The end-of-step checks: messages never received, and from the lanes' tallies added up,
  // values still held and the final model.
  void checkEnd(const EndTally &tally);
  void checkFinalModel(const EndTally &tally);
  // The group of `members`, made at its first call: looked for in `lane`'s recent groups first.
  Group &groupFor(Lane &lane, const SetPtr &members);
  static void combine(Collective &c, const IntSet &members, Rank &reporter, SourceRange at);
  // How combine and unitePieces report a problem: a code and the words, put together only
  // when called (Rank::errorWith).
  using Words = std::function<std::string()>;
  using Failure = std::function<void(const char *, const Words &)>;
  static Value unitePieces(const Collective &c, const IntSet &members, bool poisoned, const Failure &fail);
  static void matchCalls(Collective &c, const IntSet &members, Rank &reporter);
  // Reports member `position`'s call as not matching the lowest member's.
  [[gnu::noinline, gnu::cold]] static void reportMismatch(const Collective &c, const IntSet &members, Rank &reporter,
                                                          size_t position);

  Model model_;
  std::vector<ArrayInfo> arrays_;
  // Each array's static kind, or the first kind stored in it (kNoKind: none yet), by any rank.
  static constexpr int8_t kNoKind = -1;
  std::unique_ptr<std::atomic<int8_t>[]> arrayKinds_;
  Options options_;
  // World::kept's sets, freed after everything that holds them (so declared first of those).
  std::vector<std::unique_ptr<const IntSet>> keptSets_;
  SetPtr allRanks_;
  std::vector<std::unique_ptr<Lane>> lanes_; // each thread's share (one on one thread); before ranks_
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<Recorded> diags_;
  std::map<std::pair<std::string, std::tuple<uint32_t, uint32_t, uint32_t>>, size_t> diagIndex_;
  std::unique_ptr<Group> allGroup_;
  std::map<std::vector<int64_t>, std::unique_ptr<Group>> groups_;
  // The ranks first, first + stride, ... (`size` of them): one set for every rank that names
  // them, as a mesh axis (Rank::axisGroup) or a range (Rank::rangeGroup). 16 384 ranks of
  // stdlib hybrid each kept their own copy of their 1024-rank data-parallel group (128 MiB),
  // and World::groupFor compared copies element by element; a shared set it finds by pointer.
  SetPtr groupSet(int64_t first, int64_t size, int64_t stride);
  std::map<std::tuple<int64_t, int64_t, int64_t>, SetPtr> groupSets_;
  // The group last found for each (first member, size), tried before groups_ (a lane's own:
  // Lane::recentGroups): a rank calls its few groups again and again (Megatron's mesh on
  // 16 384 ranks has 2 176 of them).
  static constexpr size_t kRecentGroups = 1024;
  std::mutex groupsLock_; // a parallel run's: groups_, allGroup_ and groupSets_
  using Message = InFlight;
  std::atomic<int32_t> flows_{0};                // messages sent so far
  std::set<std::pair<int64_t, int64_t>> routes_; // (a parallel run's lanes' merged at its end)
  // inbox_[to][{from, tag}]: messages in the order they were sent; in a parallel run under
  // the lock of `to`'s stripe.
  std::vector<std::map<std::pair<int64_t, int64_t>, std::deque<Message>>> inbox_;
  static constexpr size_t kInboxStripes = 64;
  std::array<std::mutex, kInboxStripes> inboxLocks_;
  // In a parallel run, the lock of `to`'s inbox, taken; on one thread, none.
  std::unique_lock<std::mutex> lockInbox(int64_t to) {
    return parallel_ ? std::unique_lock<std::mutex>(inboxLocks_[static_cast<size_t>(to) % kInboxStripes])
                     : std::unique_lock<std::mutex>();
  }
  // Ordered point-to-point: each rank's stream (sim/Channels.h), made at the first use.
  std::vector<Stream> streams_;
  // Puts `op` of rank `from` (with `op.peer`) on its stream, and completes what can complete:
  // each matched receive gets its message, and a rank that waits for it is woken.
  void issue(int64_t from, StreamOp op);
  // A send and the receive it matches (`op` rank `rank`'s, `other` its peer's) complete.
  void complete(int64_t rank, StreamOp &op, StreamOp &other);
  // Ordered: what holds up the receive rank `r` is blocked in, on its stream and its peer's,
  // as notes for a deadlock's report.
  std::vector<Diagnostic> streamNotes(const Rank &r) const;
  // Ordered: the end-of-step report of operations left on the streams (a rank would wait
  // for them forever at the end of the step).
  void reportPendingStreams();
  bool stoppedAtLimit_ = false;
  bool parallel_ = false;  // the ranks run on several threads now
  bool watchIdle_ = false; // a parallel run's idle lanes watch before they sleep (as many lanes as processors at most)
  std::atomic<bool> diverged_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> steps_{0}; // a parallel run's statements, over its lanes (Budget::share)
  std::atomic<int> busyLanes_{0};  // a parallel run's lanes not idle (Lane::idle)
  std::atomic<bool> quiet_{false}; // every rank is done: the lanes stop
  bool completed_ = false;
  bool forged_ = false;
  unsigned errors_ = 0;
  int64_t stoppedRanks_ = 0; // ranks stopped at an error (Rank::stopped_; one thread's run)
};

// A thread's share of a run: its ranks' names for storage slots and sites, its budget and
// recent groups, looked up and written without locks; the ranks it has to run; and, in a
// parallel run (sim/Parallel.cpp), those other threads woke for it. A run on one thread has
// one lane.
struct Lane {
  Lane(uint32_t index, uint32_t lanes, const Limits &limits)
      : index(index), sites(index << Sites::kLaneShift, lanes > 1 ? Sites::Id{1} << Sites::kLaneShift : ~Sites::Id{0}),
        budget(limits) {}
  uint32_t index;
  size_t firstRank = 0, endRank = 0; // its ranks, consecutive
  SlotDirectory names;               // of its ranks' storage slots (Storage.h)
  Sites sites;                       // ids carry the lane (World::site)
  Budget budget;
  std::array<World::Group *, World::kRecentGroups> recentGroups{};
  std::deque<Rank *> runnable;                  // its ranks to run, its own thread's
  std::set<std::pair<int64_t, int64_t>> routes; // a parallel run's, merged at its end
  std::mutex lock;                              // likewise: guards woken
  std::condition_variable wakeUp;
  std::vector<Rank *> woken; // woken by other lanes' ranks
  std::atomic<bool> anyWoken{false};
  bool idle = false; // under `lock`: waits with nothing to run (World::busyLanes_ counts it out)
  EndTally end;      // what the end-of-step checks find in its ranks (World::tallyEnd)
};

// Inline: both run for every statement of every rank.
inline bool Rank::cancelled() const {
  return stopped_ || world_.cancelled_.load(std::memory_order_relaxed);
}

inline bool Rank::step(SourceRange at) {
  if (lane_->budget.charge()) [[likely]]
    return !cancelled();
  stopAtLimit(at);
  return false;
}

} // namespace schedc::sim
