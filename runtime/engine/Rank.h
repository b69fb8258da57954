// Rank — one rank of a simulated run: every operation of the language, its storage, and its
// errors. `schedc check` interprets the IR against it and compiled schedules call it through
// the runtime ABI (engine/Execute.h), so both report the same figures and the same errors.
// An operation checks its inputs (docs/checks.md); one that fails reports an error
// (aggregated across ranks by source location and kind, engine/World.h) and returns a
// *poisoned* value, so the run goes on, more errors can be found, and nothing that depends on
// the failed value reports again. Time is not its business: it tells its clock what every
// event is and what it waits for, and the cost model's rules place it (cost/Placement.h).
#pragma once

#include "cost/Placement.h"
#include "diagnostics/Diagnostics.h"
#include "diagnostics/InternalError.h"
#include "engine/Fiber.h"
#include "memory/ChunkedLog.h"
#include "sim/Channels.h"
#include "sim/Collective.h"
#include "sim/DenseWindow.h"
#include "sim/Events.h"
#include "sim/Pair.h"
#include "sim/Recompute.h"
#include "sim/Sites.h"
#include "sim/Storage.h"
#include "sim/Value.h"

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace schedc::sim {

class World;
struct Lane;

// The side of a mixture-of-experts layer a forward or backward with `weight` computes; and
// whether a weight-sized value is one side's (not the whole layer's).
cost::LayerHalf halfOf(const Value &weight);
inline bool isSide(const Value &v) {
  return halfOf(v) != cost::LayerHalf::Whole;
}
// "layer 3", as messages name a layer.
inline std::string layerOf(int64_t layer) {
  return "layer " + std::to_string(layer);
}

class Rank {
public:
  int64_t id() const { return id_; }
  const Model &model() const;
  size_t eventCount() const { return figures_.events; }
  // The events logged, those of an open `group`'s call too (placed when it closes, with these
  // indices): what a real backend's timer of an operation looks at.
  size_t eventsLogged() const { return figures_.events + (openCall() ? openCall()->events.size() : 0); }
  const RankFigures &figures() const { return figures_; }
  // The bytes of real data held on the device at event `event` (-1: not measured; see
  // measurePayloads).
  int64_t measuredAt(size_t event) const { return event < measured_.size() ? measured_[event] : -1; }
  // The most bytes of real data held in host memory or on NVMe at any event (0 if none).
  int64_t measuredTierPeak(Tier tier) const { return measuredTierPeak_[static_cast<size_t>(tier)]; }
  // Every value this rank holds in storage now.
  void forEachHeld(const std::function<void(const Storage::Held &)> &fn) const { storage_.forEach(fn); }
  // Also record, at every event, the bytes of real data held (the cpu backend); turned on
  // before the rank logs its first event.
  void measurePayloads(bool on) { measure_ = on; }
  // Its sends and receives, in order (only with Options::recordTransfers).
  const std::vector<Transfer> &transfers() const { return records_.transfers; }
  // Its overlapped pairs, in order (likewise).
  const std::vector<PairSpan> &pairs() const { return records_.pairs; }
  // Its collectives and the weights it freed, in order (likewise).
  const std::vector<CollectiveCall> &collectiveCalls() const { return records_.collectiveCalls; }
  const std::vector<WeightFreed> &weightsFreed() const { return records_.weightsFreed; }

  // ---- Storage ----
  void store(uint32_t array, const SlotIndex &index, ValuePtr v, SourceRange at);
  ValuePtr read(uint32_t array, const SlotIndex &index, SourceRange at);
  // Whether this rank holds a value in the slot (`held(...)`: no error either way).
  bool holds(uint32_t array, const SlotIndex &index) const;
  void free(uint32_t array, const SlotIndex &index, SourceRange at);

  // ---- Operations (each checks its inputs; see docs/checks.md) ----
  // Shard `shard` of `of` (ZeRO), or tensor-parallel part `part` of `parts`, or the routed
  // experts' slice `expert` of `experts` (`experts` 0: the layer without them; -1: not given).
  // `on`, `optOn`: the memory tiers the weight and the optimizer state start in (Tier's
  // numbers; `optOn` -1: where the weight is).
  std::pair<ValuePtr, ValuePtr> load(SourceRange at, int64_t layer, int64_t shard, int64_t of, int64_t part = 0,
                                     int64_t parts = 1, int64_t expert = -1, int64_t experts = -1, int64_t on = 0,
                                     int64_t optOn = -1);
  ValuePtr input(SourceRange at, const IntSet &batches);
  ValuePtr forward(SourceRange at, int64_t layer, const ValuePtr &input, const ValuePtr &weight);
  // backward_input and backward_weight (zero-bubble schedules) each compute one of the two
  // results and take half of backward's time; `part` says which (the other is poisoned).
  enum class BackwardPart { Both, Input, Weight };
  static EventKind backwardEvent(BackwardPart part) {
    return part == BackwardPart::Both    ? EventKind::Backward
           : part == BackwardPart::Input ? EventKind::BackwardInput
                                         : EventKind::BackwardWeight;
  }
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
  // `offload` (down: to a slower tier) and `prefetch` (towards the device) of `v` to tier
  // `to` (Tier's number): a copy on the transfers stream (engine/Tiers.cpp).
  ValuePtr transfer(SourceRange at, const ValuePtr &v, int64_t to, bool down);
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
  // (sim/Channels.h), under tagged nothing; the collectives between are one coalesced call
  // (coalescedWith).
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
  // set of them (CollectiveGroups::rankSet).
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
    int64_t peer = -1;                               // the rank waited on (receives), for cycle detection
    int64_t tag = 0;                                 // and the tag of the message
    const void *collective = nullptr;                // the World::Collective waited in, if any
    CollectiveKind kind = CollectiveKind::AllReduce; // and what it is
    SetPtr members{};                                // and its group
    const PostedRecv *post = nullptr;                // the ordered receive waited for, if any
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
  bool refusedInPair(SourceRange at, const char *what, bool copy = false);
  void closePair();
  // A copy of `v` made by `made` (a received message: the sender's value is made by the
  // sender's events).
  ValuePtr madeBy(const ValuePtr &v, cost::Producers made) const;
  // A copy of `v` with copies of the sets only this thread counts (a message to a rank on
  // another thread of a parallel run).
  ValuePtr detached(const ValuePtr &v) const;
  // Ordered point-to-point (engine/OrderedChannels.cpp): a send put on the rank's stream, a
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
  // Memory tiers (engine/Tiers.cpp): a tier's number names one; `v` (used by `user`) is on
  // the device; the cost model can time a copy from `from` to `to` (from = to = host: an
  // update on the host). Each reports why not.
  bool checkTierNumber(SourceRange at, const char *what, int64_t n);
  template <class User> bool checkOnDevice(SourceRange at, User user, const Value &v) {
    if (v.tier == Tier::Device || v.poisoned) [[likely]]
      return true;
    reportOffDevice(at, user(), v); // (the words are put together only for an error)
    return false;
  }
  [[gnu::noinline, gnu::cold]] void reportOffDevice(SourceRange at, const std::string &user, const Value &v);
  // A value an operation refused, as the operation still passes it on (to a collective's
  // members, to a receiver): poisoned, so no check on it speaks again, and on the device.
  static ValuePtr refusedCopy(const Value &v);
  bool pricesTier(SourceRange at, Tier from, Tier to);
  // An update runs where its optimizer state is (the device, or the host's CPUs: ZeRO-Offload),
  // with its gradient there; its weight may be on the device (the new one is made from the
  // state's fp32 master) or there.
  bool checkUpdateTiers(SourceRange at, int64_t layer, const Value &grad, const Value &weight, const Value &opt);
  // A mixture-of-experts layer's sides (engine/Experts.cpp): the load's arguments, and each
  // side's forward and backward with its checks (`grad` null for a forward).
  bool checkExpertsLoad(SourceRange at, int64_t layer, bool sharded, bool tensor, int64_t expert, int64_t experts);
  ValuePtr forwardHalf(SourceRange at, int64_t layer, const ValuePtr &input, const ValuePtr &weight);
  std::pair<ValuePtr, ValuePtr> backwardHalf(SourceRange at, int64_t layer, const ValuePtr &input, const ValuePtr &grad,
                                             const ValuePtr &weight, BackwardPart part);
  bool checkHalfInputs(SourceRange at, const char *op, int64_t layer, const Value &input, const Value *grad,
                       const Value &weight);
  // An activation or activation gradient `op` uses must be whole: not a tensor-parallel
  // partial sum, a sequence shard, or a mixture-of-experts layer's tokens at the router or at
  // the experts. False (reported) if it is not.
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
  // A read or free of a slot that holds nothing: the error that says why — once: the
  // slot's later reads and frees, until something is stored there again, are the same
  // mistake (a use after an early free, then its second free) and say nothing more.
  [[gnu::noinline, gnu::cold]] void reportEmptySlot(uint32_t array, const SlotIndex &index, SourceRange at,
                                                    bool freeing);
  // The empty slots already reported (null until one is: 8 bytes a rank).
  std::unique_ptr<std::set<std::pair<uint32_t, std::vector<int64_t>>>> reportedEmpty_;
  bool checkPieces(SourceRange at, int64_t layer, int64_t piece, int64_t count, const char *what);

  World &world_;
  int64_t id_;
  Storage storage_;
  EventLog events_;
  cost::RankClock clock_;
  RankFigures figures_;
  memory::ChunkedLog<int64_t, 9> measured_; // on the device by event, while measuring payloads
  std::array<int64_t, kTiers> measuredTierPeak_{};
  // What export reads of the run (with Options::recordTransfers), each in the rank's order.
  struct Records {
    std::vector<Transfer> transfers;
    std::vector<PairSpan> pairs;
    std::vector<CollectiveCall> collectiveCalls;
    std::vector<WeightFreed> weightsFreed;
  };
  Records records_;
  std::unique_ptr<PendingPair> pair_;          // while running an overlapped pair
  std::unique_ptr<RecomputedBytes> recompute_; // under a transformer byte model
  bool warnedRecomputeTwice_ = false;
  // Per layer, whether its last forward here ran on an input gathered from sequence shards
  // (sequence parallelism: its norms and dropout on a shard): its backward runs the same way,
  // whatever its own input (a partitioned checkpoint is gathered too, into a layer that
  // runs whole). -1: no forward of it here yet (the backward's input then says).
  std::vector<int8_t> forwardSequence_;
  bool sequenceParallelIn(int64_t layer, const Value &input, bool forward);
  // Whether `activation`, a stored input a forward has read whole here, holds only that input
  // under the byte model (full recomputation, or no transformer: its boundary tensor), so
  // that a share of it is a partitioned checkpoint; true for one no forward has read yet.
  bool keepsOnlyItsInput(const Value &activation) const;
  // The input `a` of a forward (or, `backward`, of a backward) logged next: told to recompute_.
  // A recomputing forward (at `at`) under a model that recomputes by itself is warned of once.
  void readsInput(const ValuePtr &a, bool backward, SourceRange at);
  // At the end of the run: the bytes of recomputed inputs taken off (sim/Recompute.h).
  void settleRecomputedBytes();
  // Megatron-LM's tied embedding under pipeline parallelism: whether the model ties it (and
  // has more than one layer), and whether this rank's `layer` carries the output layer's own
  // copy (the last layer on a rank that has loaded no first layer). The loads seen so far:
  bool tiedEmbeddings() const;
  bool holdsEmbeddingCopy(int64_t layer) const;
  bool loadedFirstLayer_ = false, loadedLastLayer_ = false;
  // The last collective of a weight gradient this rank called (null: none yet): an update
  // that misses micro-batches names it and its group (most often the group was the wrong
  // one). Behind a pointer: a rank's own bytes count at 65 536 ranks.
  struct GradientCollective {
    int64_t layer = 0;
    CollectiveKind kind = CollectiveKind::AllReduce;
    SourceRange at; // (kept as it is: interning it would cost every gradient collective a lookup)
    SetPtr group;
  };
  std::unique_ptr<GradientCollective> lastGradientCollective_;
  // Inside a `group`: whether it is open, and its collectives' one call (open once the first
  // is made): the first's kind and ranks, which the others must match, and their events,
  // logged without being placed until the group closes (cost::RankClock::placeCall). Made at
  // a rank's first group of collectives and kept for its next (ddp opens one a bucket).
  struct CoalescedCall {
    bool open = false;
    CollectiveKind kind = CollectiveKind::AllReduce;
    SetPtr members;
    SourceRange at;
    cost::CallEvents events;      // by event: what placement needs,
    std::vector<Sites::Id> sites; // where each was called,
    std::vector<HeldSample> held; // and what the rank held then
    // Each collective's operand (as stored) and its event (what its result, and any copy a
    // backend makes of it, was made by): the call reads its operands until it ends, so only a
    // collective's own result may be stored over its operand (in place).
    std::vector<std::pair<const Value *, int32_t>> operands;
    cost::CallScratch scratch;
  };
  bool inGroup_ = false;
  std::unique_ptr<CoalescedCall> coalescedCall_;
  CoalescedCall *openCall() const { return coalescedCall_ && coalescedCall_->open ? coalescedCall_.get() : nullptr; }
  // What the collective `kind` over `members` at `at` is to the group's call: outside one (no
  // group open, or it begins the call), continuing it, or refused (an error reported: another
  // kind or other ranks).
  enum class InCall : uint8_t { Alone, Continues, Refused };
  InCall coalescedWith(SourceRange at, CollectiveKind kind, const SetPtr &members);
  // Whether `input` of a collective was made by the open call, which computes its collectives
  // at once; then what joins the collective instead (reported, unless already poisoned).
  bool madeByOpenCall(const Value &input) const;
  ValuePtr joinedApartFromCall(SourceRange at, const Value &input);
  // Places the group's call, if any, and counts its events.
  void closeCall();
  // A store that put `stored` over `replaced` while a call is open: an error where `replaced`
  // is an operand of the call and `stored` not that collective's result.
  void checkStoreOverOperand(SourceRange at, const Value &replaced, const Value *stored, uint32_t array,
                             const SlotIndex &index);
  // The note an update of `layer` missing micro-batches `missing` gets about it (or about
  // there being none; on one rank, only where the micro-batches were input).
  std::optional<Diagnostic> gradientCollectiveNote(int64_t layer, const IntSet &missing) const;
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
  NearMap<Updated> expertsUpdated_; // the same for the routed experts' slices (Split::Experts)
  bool blocked_ = false;
  bool finished_ = false;
  bool stopped_ = false; // stopped at an error met again (error()): what follows is its echo
  // The message (source, tag) a receive waits for ({-1, 0}: none; a parallel run's under
  // its inbox's lock), and, a parallel run's (engine/Parallel.cpp), queued to run (or running
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
  // Its place on the mesh (`mesh (...)`): each axis's size, stride and name, and its group
  // along each axis (made at its first use).
  struct MeshPlace {
    std::vector<int64_t> sizes, strides;
    std::vector<std::string> names;
    std::vector<SetPtr> axisGroups;
  };
  MeshPlace mesh_;
};

} // namespace schedc::sim
