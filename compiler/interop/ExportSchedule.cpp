// ExportSchedule implementation: which ranks are the file's rows (all, or with FSDP one
// data-parallel replica), each row's computations as runs of layers, the stages as the
// layers no run starts or ends inside, then each row's actions in the order of its events
// (a run at its first event, a transfer or a collective at its own, a RESHARD at the free
// of a stage's last gathered layer, before the next event).
#include "interop/ExportSchedule.h"

#include "interop/CommsLowering.h"
#include "interop/PytorchCsv.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace schedc::interop {

namespace {

// Consecutive computations of one kind and micro-batch through consecutive layers.
struct Run {
  size_t event = 0; // its first event
  EventKind kind = EventKind::Forward;
  int64_t microBatch = 0;
  int64_t lo = 0, hi = 0; // layers lo .. hi - 1
};

// The action of a run of computations (Run::kind: a compute event).
ActionType actionOf(EventKind k) {
  switch (k) {
  case EventKind::Forward: return ActionType::Forward;
  case EventKind::Backward: return ActionType::Backward;
  case EventKind::BackwardInput: return ActionType::BackwardInput;
  case EventKind::BackwardWeight: return ActionType::BackwardWeight;
  case EventKind::Loss:
  case EventKind::Update: SCHEDC_COLLECTIVE_EVENT_CASES
  case EventKind::Pass:
  case EventKind::Offload:
  case EventKind::Prefetch: break;
  }
  SCHEDC_UNREACHABLE("a run of computations of an event that computes nothing");
}

class Exporter {
public:
  Exporter(const sim::World &world, std::vector<Diagnostic> &problems) : world_(world), problems_(problems) {}

  std::optional<std::string> run(bool comms) {
    findRows();
    if (!problems_.empty())
      return std::nullopt;
    runs_.resize(rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i)
      collectRuns(i);
    renumberMicroBatches();
    findStages();
    if (!problems_.empty())
      return std::nullopt;
    std::vector<std::vector<Cell>> rows(rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i)
      rows[i] = rowOf(i, comms);
    if (!problems_.empty())
      return std::nullopt;
    if (comms) // placed as PyTorch's runtime places them, not where the schedule did
      return withSendsAndReceives(std::move(rows));
    return writeActionTable(rows);
  }

private:
  // Reports what has no action, once per statement (the first case of it).
  void problem(const sim::Event &e, std::string message) {
    if (problems_.size() < 20 && reported_.insert(e.site).second)
      problems_.push_back(Diagnostic{Severity::Error, world_.site(e.site), std::move(message), {}});
  }

  // FSDP's collectives: an allgather of a weight's shards (UNSHARD) or a reducescatter of
  // a weight gradient (REDUCE_GRAD).
  static bool isFsdp(const sim::CollectiveCall &c) {
    return (c.kind == CollectiveKind::AllGather && c.valueKind == ValueKind::Weight) ||
           (c.kind == CollectiveKind::ReduceScatter && c.valueKind == ValueKind::WeightGrad);
  }

  // The file's rows: every rank, or where ranks gather weights and reduce-scatter gradients
  // over a data-parallel group (FSDP), the first rank of each group (one replica: PyTorch
  // runs the same file on every replica; what the others do is not compared with it). A
  // rank whose FSDP collectives use two groups is a problem.
  void findRows() {
    int64_t ranks = world_.model().ranks;
    std::vector<sim::SetPtr> groupOf(static_cast<size_t>(ranks));
    bool fsdp = false;
    for (int64_t r = 0; r < ranks; ++r)
      for (const sim::CollectiveCall &c : world_.rank(r).collectiveCalls()) {
        if (!isFsdp(c))
          continue;
        fsdp = true;
        sim::SetPtr &group = groupOf[static_cast<size_t>(r)];
        if (!group)
          group = c.group;
        else if (*group != *c.group)
          problem(world_.events(r)[c.event],
                  fmt::format("this {} is over ranks {}, but rank {}'s other FSDP collectives are over {}: a PyTorch "
                              "stage is sharded over one data-parallel group",
                              collectiveName(c.kind), c.group->str(), r, group->str()));
      }
    for (int64_t r = 0; r < ranks; ++r) {
      const auto &group = groupOf[static_cast<size_t>(r)];
      if (!fsdp || !group || group->min() == r)
        rows_.push_back(r);
    }
    fsdp_ = fsdp;
  }

  // Row i's runs; what has no action is a problem.
  void collectRuns(size_t row) {
    int64_t r = rows_[row];
    const sim::EventLog &events = world_.events(r);
    std::vector<Run> &runs = runs_[row];
    std::set<std::pair<int64_t, int64_t>> forwarded; // (layer, micro-batch)
    std::set<size_t> fsdpCalls;                      // the events of its FSDP collectives
    for (const sim::CollectiveCall &c : world_.rank(r).collectiveCalls())
      if (isFsdp(c))
        fsdpCalls.insert(c.event);
    for (size_t i = 0; i < events.size(); ++i) {
      const sim::Event &e = events[i];
      if (std::optional<CollectiveKind> collective = collectiveOf(e.kind)) {
        if (!fsdpCalls.count(i))
          problem(e, fmt::format("a PyTorch pipeline schedule has no {} (its {} parallelism is set up "
                                 "outside the file): only pipelines export, with FSDP's all-gathers of weight "
                                 "shards and reduce-scatters of weight gradients",
                                 collectiveName(*collective),
                                 *collective == CollectiveKind::AllToAll ? "expert" : "data or tensor"));
        continue;
      }
      if (isTransferEvent(e.kind)) {
        problem(e, fmt::format("a PyTorch pipeline schedule has no {} (offloading is set up outside the file, "
                               "e.g. by DeepSpeed): only pipelines export",
                               eventName(e.kind)));
        continue;
      }
      if (!isComputeEvent(e.kind))
        continue;
      if (!e.batches || e.batches->size() != 1) {
        problem(e, fmt::format("this {} of layer {} computes micro-batches {} at once; a PyTorch action computes one",
                               eventName(e.kind), e.layer, e.batches ? e.batches->str() : "{}"));
        continue;
      }
      if (e.tensorParts != 1) {
        problem(e, "a tensor-parallel part has no PyTorch pipeline action");
        continue;
      }
      int64_t mb = e.batches->min();
      if (e.kind == EventKind::Forward && !forwarded.insert({e.layer, mb}).second) {
        problem(e, fmt::format("this recomputes layer {}'s forward of micro-batch {}; PyTorch's pipeline actions "
                               "have no recomputation",
                               e.layer, mb));
        continue;
      }
      bool up = e.kind == EventKind::Forward;
      if (!runs.empty()) {
        Run &last = runs.back();
        bool continues = last.kind == e.kind && last.microBatch == mb && last.event + (last.hi - last.lo) == i &&
                         (up ? e.layer == last.hi : e.layer == last.lo - 1);
        if (continues) {
          if (up)
            ++last.hi;
          else
            --last.lo;
          continue;
        }
      }
      runs.push_back(Run{i, e.kind, mb, e.layer, e.layer + 1});
    }
  }

  // Stage boundaries: 0, L and every run's ends.
  void findStages() {
    bounds_ = {0, world_.model().layers};
    for (const std::vector<Run> &runs : runs_)
      for (const Run &run : runs) {
        bounds_.insert(run.lo);
        bounds_.insert(run.hi);
      }
    // Each stage's rank: every run covers whole stages, so a layer computed on two ranks is a
    // stage on two ranks.
    stageOwner_.assign(bounds_.size() - 1, -1);
    for (size_t row = 0; row < runs_.size(); ++row)
      for (const Run &run : runs_[row])
        for (int64_t s = stageAt(run.lo); s <= stageAt(run.hi, true); ++s) {
          int64_t &owner = stageOwner_[static_cast<size_t>(s)];
          if (owner >= 0 && owner != static_cast<int64_t>(row))
            problem(world_.events(rows_[row])[run.event],
                    fmt::format("layer {} is computed on ranks {} and {}: a PyTorch pipeline stage is on one rank{}",
                                *std::next(bounds_.begin(), s), rows_[static_cast<size_t>(owner)], rows_[row],
                                fsdp_ ? " of a replica" : ""));
          else
            owner = static_cast<int64_t>(row);
        }
  }
  // The stage starting at layer `l` (or, with `ending`, ending there); -1 if none.
  int64_t stageAt(int64_t l, bool ending = false) const {
    auto it = bounds_.find(l);
    if (it == bounds_.end() || (ending ? it == bounds_.begin() : std::next(it) == bounds_.end()))
      return -1;
    return std::distance(bounds_.begin(), it) - (ending ? 1 : 0);
  }

  std::string boundsText() const {
    std::string s;
    for (auto it = bounds_.begin(); std::next(it) != bounds_.end(); ++it)
      s += (s.empty() ? "" : ", ") + std::to_string(*it);
    return s;
  }

  // The stage holding layer l (-1: none).
  int64_t stageOfLayer(int64_t l) const {
    auto it = bounds_.upper_bound(l);
    if (it == bounds_.begin() || it == bounds_.end())
      return -1;
    return std::distance(bounds_.begin(), it) - 1;
  }

  // Where a cell goes in a row: at an event (odd keys, in event order), or just before one
  // (even keys: what happened between events, a free).
  static size_t atEvent(size_t event) { return 2 * event + 1; }
  static size_t beforeEvent(size_t event) { return 2 * event; }

  std::vector<Cell> rowOf(size_t row, bool comms) {
    int64_t r = rows_[row];
    std::map<size_t, std::vector<Cell>> at; // by atEvent / beforeEvent
    for (const Run &run : runs_[row]) {
      std::vector<Cell> &cells = at[atEvent(run.event)];
      int64_t first = stageAt(run.lo), last = stageAt(run.hi, true);
      for (int64_t k = 0; k <= last - first; ++k) {
        int64_t s = run.kind == EventKind::Forward ? first + k : last - k;
        cells.push_back(Cell{{makeAction(s, actionOf(run.kind), run.microBatch)}, {}});
      }
    }
    for (const sim::PairSpan &pair : world_.rank(r).pairs())
      overlapped(r, pair, at);
    if (comms) // (each checked; written where CommsLowering puts them)
      for (const sim::Transfer &t : world_.rank(r).transfers())
        transferAction(row, t);
    if (fsdp_)
      fsdpActions(row, at);
    std::vector<Cell> out;
    for (auto &[key, cells] : at)
      out.insert(out.end(), cells.begin(), cells.end());
    return out;
  }

  // The rows with their sends and receives where PyTorch's _add_send_recv puts them
  // (CommsLowering.h): every receive in the order its peer sends, no rank's stream waiting
  // on itself, whatever order the schedule passed its messages in.
  std::optional<std::string> withSendsAndReceives(std::vector<std::vector<Cell>> rows) {
    ActionTable table;
    table.rows = std::move(rows);
    table.rowRanges.resize(table.rows.size());
    mergeBackwardHalves(
        table, [](const Action &a) { return a.type == ActionType::BackwardInput; }, ActionType::Backward);
    std::vector<const Cell *> stuck;
    std::optional<ActionTable> lowered = addSendRecv(table, stageOwner_, &stuck);
    if (!lowered) { // (a correct step's computations can always be played in rounds)
      std::string cells;
      for (const Cell *cell : stuck)
        if (cell)
          cells += (cells.empty() ? "`" : ", `") + spell(*cell) + "`";
      problems_.push_back(Diagnostic{Severity::Error,
                                     {},
                                     "PyTorch's _add_send_recv cannot place the sends and receives: the rows stop at " +
                                         cells + ", each waiting for an input no row makes first",
                                     {}});
      return std::nullopt;
    }
    return writeActionTable(lowered->rows);
  }

  // An overlapped pair's cells, one action a side, made one OVERLAP_F_B cell: its forward
  // first, as PyTorch writes it. A side with no action (a micro-batch past the last) leaves
  // the other's cell alone.
  void overlapped(int64_t r, const sim::PairSpan &pair, std::map<size_t, std::vector<Cell>> &at) {
    std::vector<Action> sides[2];
    for (auto it = at.lower_bound(atEvent(pair.first)); it != at.end() && it->first < atEvent(pair.end);
         it = at.erase(it))
      for (const Cell &c : it->second)
        sides[it->first >= atEvent(pair.second) ? 1 : 0].push_back(c.actions[0]);
    const sim::Event &e = world_.events(r)[pair.first];
    if (sides[0].size() > 1 || sides[1].size() > 1) {
      problem(e, "a side of this `overlap` computes more than one stage or micro-batch; PyTorch's OVERLAP_F_B pairs "
                 "one forward action with one backward action");
      return;
    }
    std::vector<Action> actions;
    for (auto &side : sides)
      actions.insert(actions.end(), side.begin(), side.end());
    if (actions.size() == 2 && actions[1].type == ActionType::Forward)
      std::swap(actions[0], actions[1]);
    if (actions.size() == 2 && (actions[0].type != ActionType::Forward || actions[1].type == ActionType::Forward ||
                                actions[1].type == ActionType::BackwardWeight)) {
      problem(e, "this `overlap` pairs two computations other than a forward and a backward (B, BW or I); PyTorch's "
                 "OVERLAP_F_B pairs one of each");
      return;
    }
    if (!actions.empty())
      at[atEvent(pair.first)].push_back(Cell{Actions(actions.begin(), actions.end()), {}});
  }

  // Row `row`'s FSDP actions: UNSHARD where it gathers the first layer of a stage none of
  // whose layers it holds gathered, RESHARD where it frees the last it holds, REDUCE_GRAD
  // at its first reduce-scatter of a stage's gradient. A layer of a stage another rank
  // computes is a problem (PyTorch unshards a rank's own stages).
  void fsdpActions(size_t row, std::map<size_t, std::vector<Cell>> &at) {
    int64_t r = rows_[row];
    std::map<int64_t, int64_t> gathered; // stage -> its layers held gathered
    std::set<int64_t> reduced;
    auto ownStage = [&](int64_t layer, const sim::Event &e, const char *what) {
      int64_t s = stageOfLayer(layer);
      if (s >= 0 && stageOwner_[static_cast<size_t>(s)] == static_cast<int64_t>(row))
        return s;
      problem(e, fmt::format("rank {} {} layer {}, which it does not compute: PyTorch's FSDP actions are of a "
                             "rank's own stages",
                             r, what, layer));
      return int64_t{-1};
    };
    for (const sim::CollectiveCall &c : world_.rank(r).collectiveCalls()) {
      if (!isFsdp(c))
        continue;
      bool gather = c.kind == CollectiveKind::AllGather;
      int64_t s = ownStage(c.layer, world_.events(r)[c.event], gather ? "gathers" : "reduces the gradient of");
      if (s >= 0 && (gather ? gathered[s]++ == 0 : reduced.insert(s).second))
        at[atEvent(c.event)].push_back(
            Cell{{makeAction(s, gather ? ActionType::Unshard : ActionType::ReduceGrad, -1)}, {}});
    }
    for (const sim::WeightFreed &f : world_.rank(r).weightsFreed()) {
      int64_t s = f.whole ? stageOfLayer(f.layer) : -1;
      auto it = s >= 0 ? gathered.find(s) : gathered.end();
      if (it != gathered.end() && it->second > 0 && --it->second == 0)
        at[beforeEvent(f.before)].push_back(Cell{{makeAction(s, ActionType::Reshard, -1)}, {}});
    }
  }

  std::optional<Action> transferAction(size_t row, const sim::Transfer &t) {
    int64_t r = rows_[row];
    const sim::Event &e = world_.events(r)[t.event];
    bool gradient = t.kind == ValueKind::ActGrad;
    if ((t.kind != ValueKind::Activation && !gradient) || !t.batches || t.batches->size() != 1) {
      problem(e, fmt::format("PyTorch's pipeline actions pass one micro-batch's activation or its gradient; this "
                             "{} moves {}",
                             t.sent ? "send" : "receive", valueKindPlural(t.kind)));
      return std::nullopt;
    }
    // An activation at layer L is the output of the stage ending at L, the input of the one
    // starting there; a gradient at L is the input gradient of the stage starting at L.
    // The slot's layer index L: an activation's value is of layer L, a gradient's of L - 1
    // (the layer whose backward takes it).
    int64_t L = gradient ? t.layer + 1 : t.layer;
    bool ending = t.sent != gradient; // the stage is the one ending at L
    int64_t s = stageAt(L, ending);
    if (s < 0) {
      problem(e, fmt::format("this {} passes {} at layer {}, inside a stage (stages start at layers {})",
                             t.sent ? "send" : "receive", gradient ? "a gradient" : "an activation", L, boundsText()));
      return std::nullopt;
    }
    if (stageOwner_[static_cast<size_t>(s)] != static_cast<int64_t>(row)) {
      problem(e, fmt::format("this {} passes stage {}'s {}, but stage {} is on rank {}", t.sent ? "send" : "receive", s,
                             t.sent == gradient ? "input" : "output", s, rankOwning(s)));
      return std::nullopt;
    }
    // The stage at the other end: the next one for a forward message, the previous for a gradient.
    int64_t other = s + (t.sent == gradient ? -1 : 1);
    int64_t otherRank = other >= 0 && other < static_cast<int64_t>(stageOwner_.size()) ? rankOwning(other) : -1;
    if (otherRank != t.peer) {
      std::string which = otherRank < 0 ? "no stage" : fmt::format("stage {}, on rank {}", other, otherRank);
      problem(e, t.sent
                     ? fmt::format("this send goes to rank {}, but what takes its value is {}", t.peer, which)
                     : fmt::format("this receive comes from rank {}, but what makes its value is {}", t.peer, which));
      return std::nullopt;
    }
    ActionType type = t.sent ? (gradient ? ActionType::SendB : ActionType::SendF)
                             : (gradient ? ActionType::RecvB : ActionType::RecvF);
    return makeAction(s, type, microBatch(t.batches->min()));
  }

  // The rank computing stage s (-1: none).
  int64_t rankOwning(int64_t s) const {
    int64_t row = stageOwner_[static_cast<size_t>(s)];
    return row < 0 ? -1 : rows_[static_cast<size_t>(row)];
  }

  // With FSDP, a replica's micro-batches are numbered from 0 in the file, in their order.
  void renumberMicroBatches() {
    if (!fsdp_)
      return;
    for (const std::vector<Run> &runs : runs_)
      for (const Run &run : runs)
        microBatches_.emplace(run.microBatch, 0);
    int64_t next = 0;
    for (auto &[mb, number] : microBatches_)
      number = next++;
    for (std::vector<Run> &runs : runs_)
      for (Run &run : runs)
        run.microBatch = microBatches_[run.microBatch];
  }
  int64_t microBatch(int64_t mb) const {
    auto it = microBatches_.find(mb);
    return it == microBatches_.end() ? mb : it->second;
  }

  const sim::World &world_;
  std::vector<Diagnostic> &problems_;
  std::vector<std::vector<Run>> runs_;
  std::set<int64_t> bounds_;
  std::vector<int64_t> stageOwner_;         // stage -> the row computing it
  std::vector<int64_t> rows_;               // row -> its rank
  bool fsdp_ = false;                       // rows are one data-parallel replica's ranks
  std::map<int64_t, int64_t> microBatches_; // with FSDP: a replica's micro-batch -> its number in the file
  std::set<sim::Sites::Id> reported_;
};

} // namespace

std::optional<std::string> exportSchedule(const sim::World &world, bool comms, std::vector<Diagnostic> &problems) {
  return Exporter(world, problems).run(comms);
}

} // namespace schedc::interop
