// World — one simulated run of a schedule on every rank (engine/Rank.h). A World owns the
// ranks (each runs on its own Fiber, on one thread or on lanes of several: engine/Parallel.cpp),
// their storage and event logs, and the places where collectives and messages meet
// (engine/CollectiveGroups.h, engine/Mailboxes.h, the ordered streams; the rendezvous itself
// is engine/Communication.cpp and engine/OrderedChannels.cpp); it detects deadlock,
// aggregates the diagnostics, checks the final model, and computes the reported figures
// (sim/Events.h).
#pragma once

#include "engine/Budget.h"
#include "engine/CollectiveGroups.h"
#include "engine/Mailboxes.h"
#include "engine/OrderedStreams.h"
#include "engine/Rank.h"
#include "engine/SpinLock.h"
#include "engine/WorldOptions.h"
#include "sim/Collective.h"
#include "sim/EndTally.h"
#include "sim/SlotDirectory.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace schedc::sim {

class World {
public:
  World(Model model, std::vector<ArrayInfo> arrays, Options options);
  ~World();

  // Runs `body` for every rank, each on its own fiber, until all finish or the run cannot
  // go on (deadlock, a fatal error). Then checks the final model.
  void run(const std::function<void(Rank &)> &body);

  const Model &model() const { return model_; }
  // Every rank, shared, in order: the default group of collectives.
  const SetPtr &allRanks() const { return groups_.allRanks(); }
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
  // 2 where the run's ranks span nodes (its first and last apart), else 1: the nodes a pair
  // of the first and last pipeline stage is taken to be on.
  int32_t spanOfNodes() const {
    const cost::CostModel &cost = *options_.costModel;
    return cost.placesRanksOnNodes() && cost.nodeOf(0) != cost.nodeOf(model_.ranks - 1) ? 2 : 1;
  }
  // Where in the source an event or a stored value is (Event::site, Storage::Held::storedAt).
  const SourceRange &site(Sites::Id id) const;
  // True if a run on several threads (Options::threads) met what only a run on one thread
  // reports in a fixed order — an error, a warning, a limit, a deadlock: it stopped, and its
  // results mean nothing; the caller runs the schedule again on one thread.
  bool diverged() const { return diverged_; }
  // Every (sender, receiver) pair a send was made for, the run's point-to-point routes: a
  // real backend that needs a channel per route (the cuda backend's NCCL pairs) makes them
  // before it runs, from a verification run of the same schedule.
  const std::set<std::pair<int64_t, int64_t>> &routes() const { return mail_.routes(); }
  // The members (ascending) of every group a collective was called over: the channels of
  // collectives such a backend opens before it runs, likewise.
  std::vector<std::vector<int64_t>> collectiveGroups() const { return groups_.memberLists(); }

private:
  // The run's ranks on `lanes` lanes (one a thread).
  World(Model model, std::vector<ArrayInfo> arrays, Options options, uint32_t lanes);
  friend class Rank;
  friend struct Lane;
  struct Recorded {
    Diagnostic diag;
    int64_t rank;                    // the rank the message describes (-1: the whole run)
    std::vector<int64_t> otherRanks; // where the same problem happens too
    std::vector<bool> noted;         // by rank: in otherRanks already (a loop repeats a problem)
  };
  using Collective = CollectiveGroups::Collective;
  using Group = CollectiveGroups::Group;

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
  // The ranks on Options::threads threads (engine/Parallel.cpp); sets diverged_ where the run
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
  // What the member `last` to arrive in `c` (over `members`) does: completes it (joins the
  // members' readiness, checks and combines their inputs, reporting at `at`) and wakes the
  // others.
  void completeCall(Rank &last, Collective &c, const SetPtr &members, SourceRange at);
  // What the member `self` that completed `c` does: wakes the other `members`.
  void wakeMembers(const Collective &c, const std::vector<int64_t> &members, int64_t self);
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
  void checkFinalExperts(int64_t layer, const EndTally::Final &dense, const EndTally::Final &experts);
  Model model_;
  std::vector<ArrayInfo> arrays_;
  // Each array's static kind, or the first kind stored in it (kNoKind: none yet), by any rank.
  static constexpr int8_t kNoKind = -1;
  std::unique_ptr<std::atomic<int8_t>[]> arrayKinds_;
  // By micro-batch: whether any rank's `input` made it (ranks on several threads set them).
  std::unique_ptr<std::atomic<bool>[]> inputSeen_;
  // An update missing micro-batches that no rank ever made: the note that says so.
  void explainMissingBatches();
  Options options_;
  // Where the collectives meet, and the sets of ranks every rank may hold: freed after
  // everything that holds them (so declared first of those).
  CollectiveGroups groups_;
  std::vector<std::unique_ptr<Lane>> lanes_; // each thread's share (one on one thread); before ranks_
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<Recorded> diags_;
  std::map<std::pair<std::string, std::tuple<uint32_t, uint32_t, uint32_t>>, size_t> diagIndex_;
  using Message = InFlight;
  Mailboxes mail_;         // tagged point-to-point
  OrderedStreams ordered_; // ordered point-to-point
  // A send and the receive it matches (`op` rank `rank`'s, `other` its peer's) complete.
  void complete(int64_t rank, StreamOp &op, StreamOp &other);
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
// parallel run (engine/Parallel.cpp), those other threads woke for it. A run on one thread has
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
  CollectiveGroups::Recent recentGroups{};
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
