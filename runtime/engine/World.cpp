// World implementation: running the ranks, deadlock reports, diagnostics aggregation, the
// end-of-run checks (messages never received, values still held, the final model) and the
// reported figures.
#include "engine/World.h"

#include "memory/HugePages.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace schedc::sim {

const Model &Rank::model() const {
  return world_.model_;
}
Rank::Rank(World &world, int64_t id, Lane &lane)
    : world_(world), id_(id), storage_(world.options_.bytes, lane.names), clock_(*world.options_.costModel),
      lane_(&lane) {
  figures_.rank = id;
  if (world.options_.bytes.transformer)
    recompute_ = std::make_unique<RecomputedBytes>();
}

namespace {

// The lanes a run of `ranks` ranks runs on: one a thread (Options::threads), but one where the
// run keeps its events or transfers, or its sends and receives are ordered.
uint32_t laneCount(int64_t ranks, const Options &options) {
  if (options.keepEvents || options.recordTransfers || options.p2p == PointToPoint::Ordered)
    return 1;
  int64_t threads = options.threads != kAutoThreads ? options.threads : autoThreads(ranks);
  return static_cast<uint32_t>(std::clamp<int64_t>(threads, 1, ranks));
}

} // namespace

World::World(Model model, std::vector<ArrayInfo> arrays, Options options)
    : World(model, std::move(arrays), options, laneCount(model.ranks, options)) {}

World::World(Model model, std::vector<ArrayInfo> arrays, Options options, uint32_t lanes)
    : model_(model), arrays_(std::move(arrays)), options_(options), groups_(model.ranks, lanes > 1), mail_(model.ranks),
      ordered_(model.ranks) {
  arrayKinds_ = std::make_unique<std::atomic<int8_t>[]>(arrays_.size());
  inputSeen_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(std::max<int64_t>(model_.batches, 0)));
  for (size_t i = 0; i < arrays_.size(); ++i)
    arrayKinds_[i] = arrays_[i].kind ? static_cast<int8_t>(*arrays_[i].kind) : kNoKind;
  // Lanes of consecutive ranks: a pipeline's neighbours and a tensor-parallel group mostly
  // share one.
  for (uint32_t i = 0; i < lanes; ++i) {
    lanes_.push_back(std::make_unique<Lane>(i, lanes, options_.limits));
    if (lanes > 1)
      lanes_.back()->budget.share(steps_);
  }
  for (int64_t r = 0; r < model_.ranks; ++r) {
    Lane &lane = *lanes_[static_cast<size_t>(r * lanes / model_.ranks)];
    if (lane.endRank == 0)
      lane.firstRank = static_cast<size_t>(r);
    lane.endRank = static_cast<size_t>(r) + 1;
    ranks_.push_back(std::unique_ptr<Rank>(new Rank(*this, r, lane)));
    // A wide run's ranks are its first large allocation: looked at here, a thread that has
    // allocated a large run makes the rest of them in huge pages, not in 4 KiB pages that each
    // fault (docs/performance.md).
    memory::useHugePagesOnceLarge();
  }
}

World::~World() = default;

const SourceRange &World::site(Sites::Id id) const {
  return lanes_[lanes_.size() > 1 ? id >> Sites::kLaneShift : 0]->sites.range(id);
}

SetPtr World::forLane(const SetPtr &s) {
  if (!s || s->counting() == IntSet::Counting::Never)
    return s;
  SetPtr copy = makeSet(*s);
  copy->countAs(IntSet::Counting::Threads);
  return copy;
}

void World::run(const std::function<void(Rank &)> &body) {
  for (auto &r : ranks_) {
    Rank *rank = r.get();
    rank->fiber_ = std::make_unique<Fiber>(
        [rank, &body] {
          body(*rank);
          rank->closeCall(); // a compiled body that stopped inside a `group` leaves without ending it
          rank->finished_ = true;
        },
        options_.stackBytes);
    rank->lane_->runnable.push_back(rank); // every rank in order, in its lane
  }
  if (lanes_.size() > 1)
    runInParallel();
  else
    runOnOneThread();
  completed_ = !cancelled_;
  if (diverged_)
    return;
  for (auto &r : ranks_)
    r->settleRecomputedBytes();
  explainMissingBatches();
  if (!completed_)
    return;
  EndTally &tally = lanes_[0]->end;
  for (size_t i = 1; i < lanes_.size(); ++i)
    tally.add(std::move(lanes_[i]->end));
  checkEnd(tally);
}

void World::runOnOneThread() {
  // Every rank in order, but a woken rank ahead of every other runnable one
  // (World::schedule): a tensor-parallel group whose collective completes goes on
  // together while its ranks' state is in cache, where a queue in order of waking ran every
  // other rank in between (Megatron-LM's mesh on 16 384 ranks: 20.9 s, now 5.4 s). The
  // figures do not depend on this order: collectives match by call count, messages are FIFO
  // per pair of ranks, and time is placed from what each event waits for.
  std::deque<Rank *> &runnable = lanes_[0]->runnable;
  for (;;) {
    while (!runnable.empty()) {
      Rank *r = runnable.front();
      runnable.pop_front();
      runTurn(*r);
    }
    bool anyBlocked = std::any_of(ranks_.begin(), ranks_.end(), [](auto &r) { return !r->finished_; });
    if (!anyBlocked)
      break;
    // Ranks that wait (at some remove) for a rank stopped at its error wait for its echo, not
    // in a deadlock of their own: they are named in a note, unwind, and the run is unfinished.
    if (!cancelled_) {
      if (!waitForStoppedRanks())
        reportDeadlock();
      cancelled_ = true;
    }
    // Cancelled: let every blocked rank unwind.
    for (auto &r : ranks_)
      if (!r->finished_ && r->blocked_) {
        r->blocked_ = false;
        runnable.push_back(r.get());
      }
  }
  if (!cancelled_)
    tallyEnd(*lanes_[0]);
}

void World::runTurn(Rank &r) {
  if (r.finished_)
    return; // (a parallel run's rank queued again after it ended)
  if (!r.fiber_->started() && (cancelled_ || !r.fiber_->prepare())) {
    if (!cancelled_) // a rank that never started has nothing to unwind
      stopAtLimit({},
                  "cannot start rank " + std::to_string(r.id_) + ": the system refuses memory for its stack (" +
                      std::to_string(r.id_) +
                      " ranks are running; the limits on address space, `ulimit -v`, and on memory mappings, "
                      "vm.max_map_count, bound how many can)",
                  -1);
    r.finished_ = true;
  } else {
    r.fiber_->resume();
  }
  if (r.finished_)
    r.fiber_.reset(); // release the stack as soon as a rank is done
}

void World::schedule(Rank &r) {
  if (parallel_)
    return wake(r);
  if (r.blocked_) {
    r.blocked_ = false;
    lanes_[0]->runnable.push_front(&r);
  }
}

bool Rank::waitUntil(const std::function<bool()> &ready, Wait wait) {
  wait_ = std::move(wait);
  while (!ready()) {
    if (cancelled())
      return false;
    blocked_ = true;
    Fiber::yield();
  }
  return !cancelled();
}

void Rank::stopAtLimit(const SourceRange &at) {
  world_.stopAtLimit(at, lane_->budget.exceeded(), id_);
}

void Rank::stopForWantOf(SourceRange at, std::string why) {
  world_.stopAtLimit(at, std::move(why), id_);
}

void World::stopAtLimit(SourceRange at, std::string message, int64_t rank) {
  if (parallel_)
    return diverge();
  if (cancelled_)
    return;
  record(Severity::Error, at, "limit", std::move(message), rank);
  stoppedAtLimit_ = true;
  cancelled_ = true;
}

// ---- Diagnostics ---------------------------------------------------------------------------

bool World::record(Severity s, SourceRange at, const char *code, std::string message, int64_t rank,
                   std::vector<Diagnostic> notes) {
  if (cancelled_) // the run is being abandoned: what follows a fatal error is its echo
    return false;
  if (s == Severity::Warning && options_.silenced.silences(code))
    return false;
  if (parallel_) { // which rank reports first, and so what is reported, is the threads' race
    diverge();
    return false;
  }
  // Problems of the whole run (rank -1) are each their own report.
  auto key = std::make_pair(std::string(code), std::make_tuple(at.begin.file, at.begin.line, at.begin.col));
  auto it = rank < 0 ? diagIndex_.end() : diagIndex_.find(key);
  if (it != diagIndex_.end()) {
    Recorded &r = diags_[it->second];
    if (r.noted.empty())
      r.noted.resize(static_cast<size_t>(model_.ranks));
    if (rank == r.rank || r.noted[static_cast<size_t>(rank)])
      return true; // seen here already: constant time, however often a loop repeats it
    r.noted[static_cast<size_t>(rank)] = true;
    if (rank < r.rank) { // describe the lowest rank; the others become the note
      std::swap(rank, r.rank);
      r.noted[static_cast<size_t>(r.rank)] = false;
      r.noted[static_cast<size_t>(rank)] = true;
      r.diag.message = std::move(message);
      r.diag.notes = std::move(notes);
    }
    r.otherRanks.push_back(rank);
    return false;
  }
  if (s == Severity::Error)
    ++errors_;
  if (rank >= 0)
    diagIndex_.emplace(key, diags_.size());
  diags_.push_back(Recorded{Diagnostic{s, at, std::move(message), std::move(notes)}, rank, {}, {}});
  return false;
}

void World::explainMissingBatches() {
  std::vector<int64_t> never;
  for (int64_t b = 0; b < model_.batches; ++b)
    if (!inputSeen_[static_cast<size_t>(b)].load(std::memory_order_relaxed))
      never.push_back(b);
  // None input at all: gradients made up with fake_grad (the puzzles'), not a loop's slip.
  if (never.empty() || static_cast<int64_t>(never.size()) == model_.batches)
    return;
  for (const auto &[key, index] : diagIndex_)
    if (key.first == "update-missing-batches")
      diags_[index].diag.notes.push_back(
          note({}, "micro-batches " + IntSet(never).str() + " never enter the step: no rank's `input` makes them (of " +
                       std::to_string(model_.batches) + ", 0 to " + std::to_string(model_.batches - 1) +
                       "): a loop's bound that stops short?"));
}

bool World::hasErrors() const {
  return errors_ != 0;
}

std::vector<Diagnostic> World::diagnostics() const {
  // Problems of single operations in source order, then those of the whole run.
  std::vector<const Recorded *> order;
  for (const Recorded &r : diags_)
    order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const Recorded *a, const Recorded *b) {
    if ((a->rank < 0) != (b->rank < 0))
      return a->rank >= 0;
    if (a->rank < 0)
      return false;
    const SourceLoc &x = a->diag.range.begin, &y = b->diag.range.begin;
    return std::tie(x.file, x.line, x.col) < std::tie(y.file, y.line, y.col);
  });
  std::vector<Diagnostic> out;
  for (const Recorded *rp : order) {
    const Recorded &r = *rp;
    Diagnostic d = r.diag;
    if (!r.otherRanks.empty()) {
      std::string ranks = IntSet(r.otherRanks).str();
      d.notes.push_back(note({}, "the same happens on " + std::to_string(r.otherRanks.size()) +
                                     (r.otherRanks.size() == 1 ? " more rank: " : " more ranks: ") +
                                     ranks.substr(1, ranks.size() - 2)));
    }
    out.push_back(std::move(d));
  }
  return out;
}

void Rank::error(SourceRange at, const char *code, std::string message, std::vector<Diagnostic> notes) {
  // Independent errors of straight-line code are each reported, but a rank that meets one it
  // has reported already (a loop's next iteration) stops there: a loop that errs reports its
  // first iteration and ends (else a typo'd index in a long loop runs it to its end, a
  // poisoned value an iteration). On several threads the first error has made the run
  // diverge already.
  if (world_.record(Severity::Error, at, code, std::move(message), id_, std::move(notes)) && !stopped_ &&
      world_.options_.stopRanksAtRepeatedErrors) {
    stopped_ = true;
    ++world_.stoppedRanks_;
  }
}

void Rank::warning(SourceRange at, const char *code, std::string message) {
  world_.record(Severity::Warning, at, code, std::move(message), id_);
}

void Rank::fatal(SourceRange at, std::string message) {
  world_.record(Severity::Error, at, "fatal", std::move(message), id_);
  world_.cancelled_ = true;
}

void Rank::require(SourceRange at, bool holds, bool sameOnEveryRank, const std::string &message) {
  if (!holds && !world_.cancelled_)
    fatal(at, "requirement not met" + (sameOnEveryRank ? std::string() : " on rank " + std::to_string(id_)) + ": " +
                  message);
}

// ---- Deadlock --------------------------------------------------------------------------------

namespace {
// "rank 3" or "ranks 0, 1, ..., 5", as messages name them.
std::string rankList(const std::vector<int64_t> &ranks) {
  std::string s = IntSet(ranks).str();
  return (ranks.size() == 1 ? "rank " : "ranks ") + s.substr(1, s.size() - 2);
}
} // namespace

// Whether every blocked rank waits for a rank stopped at its error, itself or through ranks
// that do: a message from it, or a collective it (or such a rank) never joined. If so, a note
// on the first stopped rank's error says so (the stopped ranks' errors are the report).
bool World::waitForStoppedRanks() {
  if (stoppedRanks_ == 0)
    return false;
  std::vector<bool> echo(static_cast<size_t>(model_.ranks));
  for (auto &r : ranks_)
    echo[static_cast<size_t>(r->id_)] = r->stopped_;
  auto waitsForEcho = [&](const Rank &r) {
    if (r.wait_.peer >= 0)
      return static_cast<bool>(echo[static_cast<size_t>(r.wait_.peer)]);
    if (!r.wait_.collective)
      return false;
    const auto &c = *static_cast<const Collective *>(r.wait_.collective);
    const auto &members = r.wait_.members->elements();
    for (size_t i = 0; i < members.size(); ++i)
      if (!c.inputs[i] && echo[static_cast<size_t>(members[i])])
        return true;
    return false;
  };
  for (bool more = true; more;) { // until no further rank is found waiting for an echo
    more = false;
    for (auto &r : ranks_)
      if (!r->finished_ && !echo[static_cast<size_t>(r->id_)] && waitsForEcho(*r))
        echo[static_cast<size_t>(r->id_)] = more = true;
  }
  std::vector<int64_t> stopped, waiting;
  for (auto &r : ranks_) {
    if (r->stopped_)
      stopped.push_back(r->id_);
    else if (!r->finished_) {
      if (!echo[static_cast<size_t>(r->id_)])
        return false; // a deadlock of its own
      waiting.push_back(r->id_);
    }
  }
  // Noted on the first error of a stopped rank (that rank's, or the others noted on it).
  for (Recorded &r : diags_) {
    bool ofStopped = r.rank >= 0 && ranks_[static_cast<size_t>(r.rank)]->stopped_;
    for (int64_t other : r.otherRanks)
      ofStopped |= ranks_[static_cast<size_t>(other)]->stopped_;
    if (r.diag.severity != Severity::Error || !ofStopped)
      continue;
    r.diag.notes.push_back(note({}, rankList(waiting) + (waiting.size() == 1 ? " waits" : " wait") + " for " +
                                        rankList(stopped) + ", which stopped at an error it met again, and " +
                                        (waiting.size() == 1 ? "cannot" : "none can") + " continue"));
    break;
  }
  return true;
}

void World::reportDeadlock() {
  std::vector<Rank *> blocked;
  for (auto &r : ranks_)
    if (!r->finished_)
      blocked.push_back(r.get());
  Rank &first = *blocked.front();
  std::vector<Diagnostic> notes;
  // A cycle of receives: follow "waits for" from the first blocked rank.
  std::vector<int64_t> chain;
  std::vector<int> seenAt(static_cast<size_t>(model_.ranks), -1);
  for (int64_t r = first.id_; r >= 0 && !ranks_[r]->finished_ && ranks_[r]->wait_.peer >= 0;
       r = ranks_[r]->wait_.peer) {
    if (seenAt[r] >= 0) {
      std::vector<int64_t> cycle(chain.begin() + seenAt[r], chain.end());
      std::string text;
      for (size_t i = 0; i < cycle.size(); ++i) {
        if (cycle.size() > 8 && i == 4) { // long cycles: the start, then the last rank
          text += "... -> ";
          i = cycle.size() - 1;
        }
        text += "rank " + std::to_string(cycle[i]) + " -> ";
      }
      text += "rank " + std::to_string(r);
      if (cycle.size() > 8)
        text += " (" + std::to_string(cycle.size()) + " ranks)";
      notes.push_back(note({}, "the ranks wait for each other in a cycle: " + text));
      break;
    }
    seenAt[r] = static_cast<int>(chain.size());
    chain.push_back(r);
  }
  const size_t kShown = 16;
  for (size_t i = 0; i < blocked.size() && i < kShown; ++i) {
    const Rank &r = *blocked[i];
    std::string what = "rank " + std::to_string(r.id_) + " " + r.waiting();
    if (r.wait_.peer >= 0) {
      const Rank &peer = *ranks_[r.wait_.peer];
      what += peer.finished_ ? ", which has finished" : ", which is blocked too";
    } else if (r.wait_.collective) {
      // Which members never arrived, and what became of them.
      const auto &c = *static_cast<const Collective *>(r.wait_.collective);
      std::vector<int64_t> finished, elsewhere;
      const auto &members = r.wait_.members->elements();
      for (size_t i = 0; i < members.size(); ++i)
        if (!c.inputs[i])
          (ranks_[members[i]]->finished_ ? finished : elsewhere).push_back(members[i]);
      what += "; it never comes: ";
      if (!finished.empty())
        what += rankList(finished) + (finished.size() == 1 ? " has" : " have") + " finished";
      if (!elsewhere.empty())
        what += std::string(finished.empty() ? "" : ", ") + rankList(elsewhere) +
                (elsewhere.size() == 1 ? " is" : " are") + " blocked elsewhere";
    }
    notes.push_back(note(r.wait_.at, what));
    for (Diagnostic &n : ordered_.notes(r.id_, r.wait_.post, r.wait_.peer))
      notes.push_back(std::move(n));
  }
  if (blocked.size() > kShown)
    notes.push_back(note({}, "and " + std::to_string(blocked.size() - kShown) + " more blocked ranks"));
  record(Severity::Error, first.wait_.at, "deadlock",
         "deadlock: " + std::to_string(blocked.size()) + " of " + std::to_string(model_.ranks) +
             (model_.ranks == 1 ? " rank is" : " ranks are") + " blocked and can never continue",
         -1, std::move(notes));
}

// ---- End of the run ----------------------------------------------------------------------------

void World::tallyEnd(Lane &lane) {
  EndTally &tally = lane.end;
  tally = EndTally(static_cast<size_t>(model_.layers));
  // Activations and gradients still held (weights and optimizer states are the model), by the
  // statement that stored them. A statement stores many values in a row: the last site's
  // leftover is looked up once.
  EndTally::Leftover *last = nullptr;
  Sites::Id lastSite = 0;
  Kind lastKind = Kind::Activation;
  auto note = [&](int64_t rank, const Storage::Held &h) {
    Kind k = h.value->kind;
    if (h.value->poisoned) // an error was reported for it
      return;
    if (!last || h.storedAt != lastSite || k != lastKind) {
      const SourceLoc &at = site(h.storedAt).begin;
      last = &tally.leftover({at.file, at.line, at.col, int(k)}, k);
      lastSite = h.storedAt, lastKind = k;
    }
    last->note(rank, [&h] { return h.key(); });
  };
  // The updated weights held at the end (checkFinalModel).
  auto noteWeight = [&](const Storage::Held &h) {
    const Value &v = *h.value;
    if (v.step < 1 || v.layer < 0 || v.layer >= model_.layers)
      return;
    EndTally::Final &f = (v.split == Split::Experts ? tally.expertFinals : tally.finals)[v.layer];
    if (v.poisoned) {
      f.failed = true;
      return;
    }
    tally.forged |= v.forged;
    f.note(v);
  };
  for (size_t i = lane.firstRank; i < lane.endRank; ++i) {
    Rank &r = *ranks_[i];
    if (r.stopped_) // stopped at its error: what it still holds, or never updated, is its echo
      continue;
    for (Kind k : {Kind::Activation, Kind::ActGrad, Kind::WeightGrad})
      r.storage_.forEachOf(k, [&](const Storage::Held &h) { note(r.id_, h); });
    r.storage_.forEachOf(Kind::Weight, noteWeight);
  }
}

void World::checkEnd(const EndTally &tally) {
  reportPendingStreams(); // (ordered point-to-point; none under tagged)
  // Messages nobody received.
  for (int64_t to = 0; to < model_.ranks; ++to) {
    if (ranks_[to]->stopped_) // stopped at its error before it received them
      continue;
    for (const auto &[route, queue] : mail_.inbox(to))
      for (const Message &m : queue)
        record(Severity::Warning, m.sentAt, "unreceived",
               "a message sent here from rank " + std::to_string(route.first) + " to rank " + std::to_string(to) +
                   withTag(route.second) +
                   " is never received (receive it, or pass --no-warn=unreceived if it is meant)",
               route.first);
  }
  // Each warning names the first four slots in order of rank, then index.
  for (const auto &statement : tally.order) {
    const EndTally::Leftover &l = tally.leftovers.at(statement);
    std::string list;
    for (size_t i = 0; i < l.first.size(); ++i) {
      const EndTally::Slot &slot = l.first[i];
      list += (i ? ", " : "") + ranks_[static_cast<size_t>(slot.rank)]->slotName(slot.array, slot.index) + " on rank " +
              std::to_string(slot.rank);
    }
    if (l.count > EndTally::kSlotsNamed)
      list += " and " + std::to_string(l.count - EndTally::kSlotsNamed) + " more";
    SourceRange at{{std::get<0>(statement), std::get<1>(statement), std::get<2>(statement)}};
    record(Severity::Warning, at, "leftover",
           std::string(kindPlural(l.kind)) + " stored here are still held at the end of the step: " + list +
               " (`free` them once the step no longer needs them, or pass --no-warn=leftover if they are meant "
               "to stay)",
           -1);
  }
  checkFinalModel(tally);
}

// ---- Figures ------------------------------------------------------------------------------

Report World::report() const {
  Report rep;
  bool anyEvents = false;
  double computeStart = 1e300, computeEnd = -1e300, busy = 0;
  for (const auto &r : ranks_) {
    const RankFigures &f = r->figures_;
    if (f.events) {
      computeStart = std::min(computeStart, f.computeStart);
      computeEnd = std::max(computeEnd, f.computeEnd);
      if (f.peakMemory > rep.maxMemory) {
        rep.maxMemory = f.peakMemory;
        rep.maxMemoryRank = f.rank;
        rep.maxMemoryTime = f.peakTime;
      }
      if (!anyEvents || f.lastStart > rep.timesteps)
        rep.timesteps = f.lastStart;
      if (!anyEvents || f.end > rep.makespan)
        rep.makespan = f.end;
      anyEvents = true;
    }
    if (f.peakBytes > rep.maxBytes) {
      rep.maxBytes = f.peakBytes;
      rep.maxBytesRank = f.rank;
    }
    rep.events += f.events;
    busy += f.computeTime;
    rep.communicationVolume += f.communicationVolume;
    rep.communicationBytes += f.communicationBytes;
    rep.flops += f.flops;
    rep.modelFlops += f.modelFlops;
    rep.ranks.push_back(f);
  }
  if (computeEnd > computeStart)
    rep.bubble = 1 - busy / (static_cast<double>(model_.ranks) * (computeEnd - computeStart));
  return rep;
}

} // namespace schedc::sim
