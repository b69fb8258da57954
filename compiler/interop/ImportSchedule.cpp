// ImportSchedule implementation: the table's shape (ImportShape.h), FSDP's lowering where
// it applies (FsdpLowering.h), then one line of schedule per cell.
#include "interop/ImportSchedule.h"

#include "interop/CommsLowering.h"
#include "interop/FsdpLowering.h"
#include "interop/ImportShape.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

namespace schedc::interop {

namespace {

// Writes the schedule, one cell a line.
class Writer {
public:
  Writer(const Shape &shape, DiagnosticEngine &diags) : shape_(shape), diags_(diags) {}

  void line(const std::string &code, SourceRange origin) {
    out_.text += code + "\n";
    out_.origins.push_back(origin);
  }
  // One cell of rank `rank`'s row; false if it cannot mean anything (reported). An
  // overlapped pair's receives come first, its computations overlapped, then its sends.
  bool cell(int64_t rank, const Cell &cell) {
    current_ = &cell;
    std::vector<Code> codes;
    for (const Action &a : cell.actions) {
      std::optional<Code> one = action(rank, a, cell.range);
      if (!one)
        return false;
      codes.push_back(std::move(*one));
    }
    std::string code;
    auto add = [&code](const std::string &part) {
      if (!part.empty())
        code += (code.empty() ? "" : " ") + part;
    };
    if (codes.size() == 1) {
      add(codes[0].before), add(codes[0].compute), add(codes[0].after);
    } else {
      add(codes[0].before), add(codes[1].before);
      add("overlap { " + codes[0].compute + " } with { " + codes[1].compute + " }");
      add(codes[0].after), add(codes[1].after);
    }
    ActionType type = cell.actions[0].type;
    bool posted = type == ActionType::RecvF || type == ActionType::RecvB;
    line("    " + code + (code.empty() ? "" : " ") + "// " + spell(cell) +
             (posted ? ": a receive posted; the computation that needs it waits for it" : "") +
             (!shape_.fsdp ? plainNote(type) : "") +
             (*cell.insertedBy ? std::string(" (added: ") + cell.insertedBy + ")" : ""),
         cell.range);
    return true;
  }
  // The start of rank `rank`'s block (row `row` of the file): its stages' weights (or, with
  // FSDP, their shards) loaded.
  void startRow(int64_t rank, SourceRange row) {
    line(shape_.fsdp ? fmt::format("  if pp == {} {{", rank) : fmt::format("  if rank == {} {{", rank), row);
    for (int64_t s : stagesOf(rank))
      line(fmt::format("    for l in {} {{ {}; }}", layersOf(s),
                       shape_.fsdp ? "ws[l], opt[l] = load(l, shard = replica, of = dp)" : "w[l], opt[l] = load(l)"),
           row);
  }
  // The end of the block: a receive posted and never waited for is waited for here, then
  // each stage with a weight gradient is updated (a stage with none is not: the check says
  // so); with FSDP, a stage's gradient must have been reduced (false, reported, if not).
  bool endRow(int64_t rank, SourceRange row) {
    for (const auto &[key, at] : posted_) {
      const auto &[gradient, s, mb] = key;
      line("    " + (gradient ? recvB(s, mb) : recvF(s, mb)) + " // never waited for", at);
    }
    bool ok = true;
    for (int64_t s : stagesOf(rank)) {
      if (shape_.firstGradient[static_cast<size_t>(s)] < 0)
        continue;
      if (shape_.fsdp && !reduced_.count(s)) {
        diags_.error(row, fmt::format("stage {0}'s gradient is never reduced over the replicas: the row has no "
                                      "`{0}REDUCE_GRAD` after its last weight gradient",
                                      s));
        ok = false;
        continue;
      }
      line(fmt::format("    for l in {} {{ {}; free gw[l]; }}", layersOf(s),
                       shape_.fsdp ? "ws[l], opt[l] = update(l, gw[l], ws[l], opt[l])"
                                   : "w[l], opt[l] = update(l, gw[l], w[l], opt[l])"),
           row);
    }
    line("  }", row);
    posted_.clear(), unsharded_.clear(), reduced_.clear(), gradients_.clear(), made_.clear(), sent_.clear();
    return ok;
  }
  ImportedSchedule take() { return std::move(out_); }

  // What PyTorch's runtime does with an FSDP action on a stage that is not FSDP
  // (schedules.py, _PipelineScheduleRuntime._step_microbatches; stage.py, perform_reduce_grad).
  static const char *plainNote(ActionType type) {
    if (type == ActionType::Unshard || type == ActionType::Reshard)
      return ": the stage is not FSDP, so PyTorch's runtime does nothing here";
    if (type == ActionType::ReduceGrad)
      return ": the stage is not FSDP, so PyTorch's runtime only scales its gradients here";
    return "";
  }

private:
  static std::string first(int64_t s) { return std::to_string(s) + " * per"; }
  static std::string end(int64_t s) { return std::to_string(s + 1) + " * per"; }
  static std::string layersOf(int64_t s) { return first(s) + ".." + end(s); }
  int64_t owner(int64_t s) const { return shape_.owner[static_cast<size_t>(s)]; }
  std::vector<int64_t> stagesOf(int64_t rank) const {
    std::vector<int64_t> mine;
    for (int64_t s = 0; s < shape_.stages; ++s)
      if (owner(s) == rank)
        mine.push_back(s);
    return mine;
  }
  // Rank `rank` of the file as a schedule's rank: itself, or with FSDP the rank of that
  // pipeline position in this rank's replica.
  std::string peer(int64_t rank) const {
    return shape_.fsdp ? fmt::format("rank_at(pp = {})", rank) : std::to_string(rank);
  }
  // Whether this file lets the schedule pass stage s's messages itself (compute only) to a rank.
  bool implied(int64_t rank, int64_t s) const { return !shape_.comms && owner(s) != rank; }
  std::string accumulate(const Action &a) const {
    bool firstOne = shape_.firstGradient[static_cast<size_t>(a.stage)] == a.microBatch;
    return firstOne ? fmt::format("gw[l] = gw[l, {0}]; free gw[l, {0}];", a.microBatch)
                    : fmt::format("gw[l] = gw[l] + gw[l, {0}]; free gw[l, {0}];", a.microBatch);
  }

  std::string sendF(int64_t s, int64_t mb) const {
    return fmt::format("send({0}, act[{1}, {2}], tag = {3}); free act[{1}, {2}];", peer(owner(s + 1)), end(s), mb,
                       shape_.forwardTag(s + 1, mb));
  }
  std::string recvF(int64_t s, int64_t mb) const {
    return fmt::format("act[{}, {}] = recv({}, tag = {});", first(s), mb, peer(owner(s - 1)), shape_.forwardTag(s, mb));
  }
  std::string postF(int64_t s, int64_t mb) const {
    return fmt::format("post_recv({}, tag = {});", peer(owner(s - 1)), shape_.forwardTag(s, mb));
  }
  std::string postB(int64_t s, int64_t mb) const {
    return fmt::format("post_recv({}, tag = {});", peer(owner(s + 1)), shape_.gradientTag(s, mb));
  }
  std::string sendB(int64_t s, int64_t mb) const {
    return fmt::format("send({0}, gact[{1}, {2}], tag = {3}); free gact[{1}, {2}];", peer(owner(s - 1)), first(s), mb,
                       shape_.gradientTag(s - 1, mb));
  }
  std::string recvB(int64_t s, int64_t mb) const {
    return fmt::format("gact[{}, {}] = recv({}, tag = {});", end(s), mb, peer(owner(s + 1)), shape_.gradientTag(s, mb));
  }

  // Whether the file posted the receive (gradient or not, stage, micro-batch) that a
  // computation waits for; it is then done.
  bool waitFor(bool gradient, int64_t s, int64_t mb) { return posted_.erase({gradient, s, mb}) > 0; }
  // In a file with its sends and receives, a computation whose input (or gradient) comes from
  // another rank needs its receive posted earlier in the row, as PyTorch's runtime asserts.
  bool received(int64_t rank, bool gradient, int64_t s, int64_t mb, SourceRange at) {
    int64_t from = gradient ? s + 1 : s - 1;
    if (!shape_.comms || from < 0 || from >= shape_.stages || owner(from) == rank || waitFor(gradient, s, mb))
      return true;
    diags_.error(at, fmt::format("stage {}'s {} of micro-batch {} needs {} from rank {} (stage {}), but no `{}{}{}` "
                                 "earlier in this row receives it",
                                 s, gradient ? "backward" : "forward", mb, gradient ? "its gradient" : "its input",
                                 owner(from), from, s, gradient ? "RECV_B" : "RECV_F", mb));
    return false;
  }

  // The code of an action: what comes before its computation (its input, a message
  // received), the computation (what an overlapped pair overlaps), and what comes after (a
  // message sent).
  struct Code {
    std::string before, compute, after;
  };

  Code forward(int64_t rank, int64_t s, int64_t mb) {
    Code code;
    if (s == 0 && shape_.fsdp) // replica d takes micro-batches d M to d M + M - 1
      code.before = fmt::format("act[0, {0}] = input({{replica * {1} + {0}}});", mb, shape_.microBatches);
    else if (s == 0)
      code.before = fmt::format("act[0, {0}] = input({{{0}}});", mb);
    else if (owner(s - 1) != rank) // received here (a file with receives posted it before)
      code.before = recvF(s, mb);
    code.compute = fmt::format("for l in {0} {{ act[l + 1, {1}] = forward(l, act[l, {1}], w[l]); }}", layersOf(s), mb);
    if (s + 1 < shape_.stages && implied(rank, s + 1))
      code.after = sendF(s, mb);
    return code;
  }
  // A backward (or its input half) `compute` with what it starts with (the loss, or the
  // gradient received) and ends with (the input's gradient dropped at stage 0, or sent back).
  Code backwardOf(int64_t rank, int64_t s, int64_t mb, const std::string &compute) const {
    Code code;
    if (s + 1 == shape_.stages)
      code.compute = fmt::format("gact[layers, {0}] = loss(act[layers, {0}]); free act[layers, {0}]; ", mb);
    else if (owner(s + 1) != rank)
      code.before = recvB(s, mb);
    code.compute += compute;
    if (s == 0)
      code.compute += fmt::format(" free gact[0, {}];", mb);
    else if (implied(rank, s - 1))
      code.after = sendB(s, mb);
    return code;
  }

  // The code of one action (none for a receive posted), or nullopt if it means nothing
  // (reported).
  std::optional<Code> action(int64_t rank, const Action &a, SourceRange at) {
    int64_t s = a.stage, mb = a.microBatch;
    bool backward = a.type != ActionType::Forward && a.type != ActionType::BackwardWeight && isCompute(a.type);
    if (a.type == ActionType::Forward || backward) // (made for what sends it, even where reported below)
      made_.insert({backward, s, mb});
    if ((a.type == ActionType::Forward || backward) && !received(rank, backward, s, mb, at))
      return std::nullopt;
    if (!hasMicroBatch(a.type) && !shape_.fsdp)
      return Code{}; // plain stages: UNSHARD and RESHARD do nothing, REDUCE_GRAD scales (nothing the check follows)
    if (!hasMicroBatch(a.type))
      return fsdpAction(rank, a, at);
    if (isCompute(a.type) && !fsdpReady(a, at))
      return std::nullopt;
    switch (a.type) {
    case ActionType::Forward: return forward(rank, s, mb);
    case ActionType::BackwardWeight:
      return Code{{},
                  fmt::format("for l in reversed({0}) {{ gw[l, {1}] = backward_weight(l, act[l, {1}], gact[l + 1, "
                              "{1}], w[l]); free act[l, {1}], gact[l + 1, {1}]; {2} }}",
                              layersOf(s), mb, accumulate(a)),
                  {}};
    case ActionType::SendF:
      if (!exchanges(rank, s, s + 1, at) || !sendable(a, at))
        return std::nullopt;
      return Code{{}, {}, sendF(s, mb)};
    case ActionType::SendB:
      if (!exchanges(rank, s, s - 1, at) || !sendable(a, at))
        return std::nullopt;
      return Code{{}, {}, sendB(s, mb)};
    case ActionType::RecvF:
    case ActionType::RecvB: {
      bool gradient = a.type == ActionType::RecvB;
      if (!exchanges(rank, s, gradient ? s + 1 : s - 1, at))
        return std::nullopt;
      if (auto [it, fresh] = posted_.emplace(std::tuple{gradient, s, mb}, at); !fresh) {
        diags_.error(at, fmt::format("`{}` is posted again before anything waits for the first", spell(Cell{{a}, {}})))
            .note(it->second, "first posted here");
        return std::nullopt;
      }
      return Code{{}, gradient ? postB(s, mb) : postF(s, mb), {}};
    }
    default: break;
    }
    if (shape_.inputHalf(a))
      return backwardOf(rank, s, mb,
                        fmt::format("for l in reversed({0}) {{ gact[l, {1}] = backward_input(l, act[l, {1}], gact[l + "
                                    "1, {1}], w[l]); }}",
                                    layersOf(s), mb));
    return backwardOf(rank, s, mb,
                      fmt::format("for l in reversed({0}) {{ gw[l, {1}], gact[l, {1}] = backward(l, act[l, {1}], "
                                  "gact[l + 1, {1}], w[l]); free gact[l + 1, {1}], act[l, {1}]; {2} }}",
                                  layersOf(s), mb, accumulate(a)));
  }

  // With FSDP, whether a computation finds its stage's parameters gathered and, if it makes
  // a weight gradient, the gradient not reduced yet (reported if not); counts the gradient.
  bool fsdpReady(const Action &a, SourceRange at) {
    if (!shape_.fsdp)
      return true;
    int64_t s = a.stage;
    if (!unsharded_.count(s)) {
      diags_.error(at, fmt::format("stage {0}'s parameters are sharded here: no `{0}UNSHARD` earlier in this row "
                                   "gathers them (or a `{0}RESHARD` freed them)",
                                   s));
      return false;
    }
    if (!shape_.makesWeightGradient(a))
      return true;
    if (auto it = reduced_.find(s); it != reduced_.end()) {
      diags_
          .error(at, fmt::format("`{}` comes after stage {}'s REDUCE_GRAD: the gradient was reduced without it",
                                 spell(Cell{{a}, {}}), s))
          .note(it->second, "reduced here");
      return false;
    }
    ++gradients_[s];
    return true;
  }

  // UNSHARD (the stage's layers all-gathered over the replicas), RESHARD (freed) or
  // REDUCE_GRAD (its gradient reduce-scattered over them), or nullopt (reported) where the
  // row has no such stage or the action cannot come here.
  std::optional<Code> fsdpAction(int64_t rank, const Action &a, SourceRange at) {
    int64_t s = a.stage;
    std::string spelt = spell(Cell{{a}, {}});
    if (s >= shape_.stages || owner(s) != rank) {
      diags_.error(at, fmt::format("`{}`: stage {} is not computed in this row (rank {}), so its parameters are not "
                                   "this rank's",
                                   spelt, s, rank));
      return std::nullopt;
    }
    switch (a.type) {
    case ActionType::Unshard:
      if (auto [it, fresh] = unsharded_.emplace(s, at); !fresh) {
        diags_.error(at, fmt::format("`{}`: stage {} is unsharded already", spelt, s))
            .note(it->second, "unsharded here, and not resharded since");
        return std::nullopt;
      }
      return Code{{}, fmt::format("for l in {} {{ w[l] = allgather(ws[l], group = replica); }}", layersOf(s)), {}};
    case ActionType::Reshard:
      if (!unsharded_.erase(s)) {
        diags_.error(at, fmt::format("`{0}`: stage {1} is not unsharded here (no `{1}UNSHARD` since its last RESHARD)",
                                     spelt, s));
        return std::nullopt;
      }
      return Code{{}, fmt::format("for l in {} {{ free w[l]; }}", layersOf(s)), {}};
    default: break;
    }
    if (auto it = reduced_.find(s); it != reduced_.end()) {
      diags_.error(at, fmt::format("`{}`: stage {}'s gradient is reduced already", spelt, s))
          .note(it->second, "reduced here");
      return std::nullopt;
    }
    if (int64_t made = gradients_[s]; made < shape_.microBatches) {
      diags_.error(at, fmt::format("`{}` comes after {} of stage {}'s {} weight gradients: the rest would miss the "
                                   "reduction",
                                   spelt, made, s, shape_.microBatches));
      return std::nullopt;
    }
    reduced_.emplace(s, at);
    return Code{{}, fmt::format("for l in {} {{ gw[l] = reducescatter(gw[l], group = replica); }}", layersOf(s)), {}};
  }

  // Whether a SEND_F (SEND_B) finds the stage's output (input gradient) made earlier in the
  // row and not sent yet (reported if not), as PyTorch's runtime needs it.
  bool sendable(const Action &a, SourceRange at) {
    if (*current_->insertedBy) // added after its computation: what is wrong is reported there
      return true;
    bool gradient = a.type == ActionType::SendB;
    std::tuple key{gradient, a.stage, a.microBatch};
    std::string spelt = spell(Cell{{a}, {}});
    if (auto it = sent_.find(key); it != sent_.end()) {
      diags_
          .error(at, fmt::format("`{}` sends stage {}'s {} of micro-batch {} a second time", spelt, a.stage,
                                 gradient ? "input gradient" : "output", a.microBatch))
          .note(it->second, "first sent here");
      return false;
    }
    if (!made_.count(key)) {
      diags_.error(at, fmt::format("`{}` sends stage {}'s {} of micro-batch {}, but no `{}{}{}` earlier in this row "
                                   "makes it",
                                   spelt, a.stage, gradient ? "input gradient" : "output", a.microBatch, a.stage,
                                   gradient ? (shape_.inputActions ? "I" : "B") : "F", a.microBatch));
      return false;
    }
    sent_.emplace(key, at);
    return true;
  }

  // Whether stage s of this rank can exchange with stage `other` (reported if not): there is
  // one, and it is on another rank.
  bool exchanges(int64_t rank, int64_t s, int64_t other, SourceRange at) {
    if (other < 0 || other >= shape_.stages) {
      diags_.error(at, fmt::format("stage {} has no {} stage to exchange with (stages 0 to {})", s,
                                   other < s ? "previous" : "next", shape_.stages - 1));
      return false;
    }
    if (owner(other) != rank)
      return true;
    diags_.error(at, fmt::format("stage {} is on this rank too (rank {}): its values stay in the rank's storage, "
                                 "there is nothing to send or receive",
                                 other, rank));
    return false;
  }

  const Shape &shape_;
  DiagnosticEngine &diags_;
  ImportedSchedule out_;
  std::map<std::tuple<bool, int64_t, int64_t>, SourceRange> posted_; // receives the row posted
  std::map<int64_t, SourceRange> unsharded_, reduced_;               // FSDP: stages gathered, gradients reduced (where)
  std::map<int64_t, int64_t> gradients_;                             // stage -> weight gradients made so far
  // (gradient or not, stage, micro-batch): outputs and input gradients the row made, and sent (where)
  std::set<std::tuple<bool, int64_t, int64_t>> made_;
  const Cell *current_ = nullptr; // the cell being written
  std::map<std::tuple<bool, int64_t, int64_t>, SourceRange> sent_;
};

constexpr std::array<std::string_view, 24> kReserved{
    "import", "schedule", "proc", "let", "free", "if",  "else", "for",   "in",     "reversed", "mesh", "require",
    "true",   "false",    "del",  "and", "or",   "not", "rank", "ranks", "layers", "batches",  "held", "size"};

} // namespace

std::string scheduleNameFor(const std::string &path) {
  std::string stem = std::filesystem::path(path).stem().string(), name;
  for (char c : stem)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  bool plain = !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
               std::find(kReserved.begin(), kReserved.end(), name) == kReserved.end();
  return plain ? name : "csv_" + name;
}

namespace {

// The reading of the file's stages: plain modules, unless --fsdp or -D dp says they are FSDP
// (then a file without UNSHARDs gets them as PyTorch's runtime lowers a compute-only file, and
// one without REDUCE_GRAD gets those as PyTorch's before it had one reduced a stage's
// gradient with its last weight gradient); false (reported) where FSDP meets a file with its
// sends and receives but no UNSHARD, which PyTorch's runtime would not lower.
bool lowerFsdp(ActionTable &table, const ImportOptions &opts, Shape &shape, DiagnosticEngine &diags) {
  auto gathers = [](const Action &a) { return a.type == ActionType::Unshard || a.type == ActionType::Reshard; };
  shape.fsdpActions = firstCellWith(table, gathers) != nullptr;
  // Plain stages: PyTorch's runtime skips UNSHARD and RESHARD where the stage is not an
  // FSDPModule, and REDUCE_GRAD only scales a plain or DDP module's gradients.
  if (!opts.fsdp && !opts.replicas)
    return true;
  if (!shape.fsdpActions) {
    if (const Cell *cell = firstCellWith(table, [](const Action &a) { return isTransfer(a.type); })) {
      diags.error(cell->range,
                  fmt::format("`{}`: {} reads the stages as FSDP modules, but this file has its sends and receives "
                              "and no UNSHARD: PyTorch's runtime adds UNSHARD and RESHARD only to a compute-only "
                              "file (write them in the file, or read the stages as plain modules without {})",
                              spell(*cell), opts.fsdp ? "--fsdp" : "-D dp", opts.fsdp ? "--fsdp" : "-D dp"));
      return false;
    }
    addUnshardReshard(table);
  }
  shape.fsdp = true;
  if (!firstCellWith(table, [](const Action &a) { return a.type == ActionType::ReduceGrad; }))
    addReduceGrad(table, shape.microBatches, [&shape](const Action &a) { return shape.makesWeightGradient(a); });
  return true;
}

// Where PyTorch's rounds stop on a compute-only file (CommsLowering.h): one error at the
// first row's stuck cell, a note at each other row's, each saying what its action waits for.
void reportStuck(const std::vector<const Cell *> &stuck, const Shape &sh, DiagnosticEngine &diags) {
  auto waitsFor = [&](const Cell &cell) {
    std::string what;
    for (const Action &a : cell.actions) {
      if (a.type == ActionType::Forward && a.stage > 0)
        what += fmt::format("{}stage {}'s forward of micro-batch {} (`{}F{}`, rank {})", what.empty() ? "" : " and ",
                            a.stage - 1, a.microBatch, a.stage - 1, a.microBatch, sh.owner[size_t(a.stage - 1)]);
      else if (isCompute(a.type) && a.type != ActionType::BackwardWeight && a.stage + 1 < sh.stages)
        what += fmt::format("{}the gradient from stage {}'s backward of micro-batch {} (rank {})",
                            what.empty() ? "" : " and ", a.stage + 1, a.microBatch, sh.owner[size_t(a.stage + 1)]);
    }
    return fmt::format("`{}` waits for {}", spell(cell), what);
  };
  const Cell *first = nullptr;
  std::vector<const Cell *> others;
  for (const Cell *cell : stuck)
    if (cell)
      (first ? others.push_back(cell) : void(first = cell));
  auto diag = diags.error(first->range, waitsFor(*first) + ", which no row computes before it: PyTorch's runtime "
                                                           "cannot add the sends and receives to this compute-only "
                                                           "file (_add_send_recv: \"Malformed compute schedule\")");
  for (const Cell *cell : others)
    diag.note(cell->range, waitsFor(*cell));
}

// How the stages were read, for the report.
std::string readingOf(const Shape &sh, const ImportOptions &opts) {
  if (sh.fsdp)
    return fmt::format("FSDP stages ({}): the file is one of `dp` replicas; UNSHARD all-gathers a stage's "
                       "parameters over them, REDUCE_GRAD reduce-scatters its gradient{}",
                       opts.fsdp ? "--fsdp" : "-D dp",
                       sh.fsdpActions ? "" : "; UNSHARD and RESHARD added as PyTorch's runtime adds them");
  return std::string("plain stages (not FSDP)") +
         (sh.fsdpActions ? ": UNSHARD and RESHARD do nothing, as in PyTorch's runtime for a stage that is not an "
                           "FSDPModule; --fsdp or -D dp=N reads them as FSDP"
                         : "");
}

// The schedule's header: its parameters, what it requires of them, and with FSDP its mesh.
void writeHeader(Writer &w, const Shape &sh, const std::string &name, const std::string &from, SourceRange top) {
  w.line(fmt::format("// {}: imported by `schedc import` from {} (a PyTorch pipeline schedule: {} ranks, {} "
                     "stages placed {}, {} micro-batches, {}).",
                     name, from, sh.ranks, sh.stages, sh.placement(), sh.microBatches,
                     sh.lowered ? "compute only; its sends and receives added as PyTorch's runtime adds them"
                     : sh.comms ? "with its sends and receives"
                                : "compute only; the sends and receives are implied"),
         top);
  w.line("// Each line in a rank's block is one cell of its row; an OVERLAP_F_B pair is an `overlap`.", top);
  w.line("// Sends and receives meet as PyTorch's over NCCL do: per pair of ranks, in the order they were sent.", top);
  w.line("@p2p(ordered)", top);
  if (!sh.fsdp) {
    w.line(fmt::format("schedule {}(layers = {}, batches = {}, ranks = {}) {{", name, sh.stages, sh.microBatches,
                       sh.ranks),
           top);
  } else {
    w.line("// FSDP: the file is one of `dp` data-parallel replicas (mesh axis `replica`), each the file's ranks "
           "(axis `pp`);",
           top);
    w.line(fmt::format("// replica d takes micro-batches d * {0} to d * {0} + {1} and keeps a 1/dp shard of its "
                       "stages' weights (ws).",
                       sh.microBatches, sh.microBatches - 1),
           top);
    w.line(fmt::format("schedule {}(layers = {}, dp = 2, batches = {} * dp, ranks = {} * dp) {{", name, sh.stages,
                       sh.microBatches, sh.ranks),
           top);
  }
  w.line(fmt::format("  require(layers % {0} == 0, \"the file has {0} stages: `layers` must be a multiple of {0}\");",
                     sh.stages),
         top);
  if (!sh.fsdp) {
    w.line(fmt::format("  require(batches == {0}, \"the file schedules {0} micro-batches\");", sh.microBatches), top);
    w.line(fmt::format("  require(ranks == {0}, \"the file has {0} ranks (rows)\");", sh.ranks), top);
  } else {
    w.line("  require(dp >= 1, \"`dp`, the number of data-parallel replicas, must be at least 1\");", top);
    w.line(fmt::format("  require(batches == {0} * dp, \"the file schedules {0} micro-batches in each replica\");",
                       sh.microBatches),
           top);
    w.line(fmt::format("  require(ranks == {0} * dp, \"the file has {0} ranks (rows) in each replica\");", sh.ranks),
           top);
    w.line(fmt::format("  mesh (replica = dp, pp = {});", sh.ranks), top);
  }
  w.line("  let per = layers / " + std::to_string(sh.stages) + ";", top);
}

} // namespace

std::optional<ImportedSchedule> importSchedule(const ActionTable &file, const std::string &name,
                                               const std::string &from, const ImportOptions &opts,
                                               DiagnosticEngine &diags) {
  std::optional<Shape> shape = shapeOf(file, diags);
  if (!shape)
    return std::nullopt;
  ActionTable table = file;
  if (!lowerFsdp(table, opts, *shape, diags))
    return std::nullopt;
  // A compute-only file gets its sends and receives as PyTorch's runtime gives them.
  if (!shape->comms) {
    std::vector<const Cell *> stuck;
    std::optional<ActionTable> lowered = addSendRecv(table, shape->owner, &stuck);
    if (!lowered) {
      reportStuck(stuck, *shape, diags);
      return std::nullopt;
    }
    table = std::move(*lowered);
    shape->comms = shape->lowered = true;
  }
  const Shape &sh = *shape;
  SourceRange top = table.rowRanges.front();
  Writer w(sh, diags);
  writeHeader(w, sh, name, from, top);
  bool ok = true;
  for (int64_t r = 0; r < sh.ranks; ++r) {
    SourceRange row = table.rowRanges[static_cast<size_t>(r)];
    w.startRow(r, row);
    for (const Cell &cell : table.rows[static_cast<size_t>(r)])
      ok = w.cell(r, cell) && ok;
    ok = w.endRow(r, row) && ok;
  }
  w.line("}", top);
  if (!ok)
    return std::nullopt;
  ImportedSchedule out = w.take();
  out.tagMeaning = [sh](int64_t tag) { return sh.tagMeaning(tag); };
  out.reading = readingOf(sh, opts);
  return out;
}

} // namespace schedc::interop

namespace schedc::interop {

bool isPytorchSchedule(const std::string &path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
}

std::optional<uint32_t> addImported(uint32_t csv, const ImportOptions &opts, SourceManager &sources,
                                    DiagnosticEngine &diags, ImportedSchedule *facts) {
  std::optional<ActionTable> table = readActionTable(csv, sources, diags);
  if (!table)
    return std::nullopt;
  const std::string &path = sources.name(csv);
  std::optional<ImportedSchedule> imported =
      importSchedule(*table, scheduleNameFor(path), std::filesystem::path(path).filename().string(), opts, diags);
  if (!imported)
    return std::nullopt;
  uint32_t id = sources.addDerived(path + ".sched", std::move(imported->text), std::move(imported->origins));
  if (facts) {
    facts->tagMeaning = std::move(imported->tagMeaning);
    facts->reading = std::move(imported->reading);
  }
  return id;
}

} // namespace schedc::interop
