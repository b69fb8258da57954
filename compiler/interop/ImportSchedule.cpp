// ImportSchedule implementation: the table's shape (ImportShape.h), its reading
// (ImportReading.h), then the code of each cell (ImportCode.h) as a line of schedule or a
// table's row (ImportTables.h).
#include "interop/ImportSchedule.h"

#include "interop/CommsLowering.h"
#include "interop/ImportCode.h"
#include "interop/ImportReading.h"
#include "interop/ImportShape.h"
#include "interop/ImportTables.h"
#include "interop/MessageMarks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string_view>

namespace schedc::interop {

namespace {

// Writes the schedule, one cell a line, or with `tables` its rank blocks as tables.
class Writer {
public:
  Writer(const Shape &shape, DiagnosticEngine &diags, RowTables *tables)
      : shape_(shape), diags_(diags), tables_(tables), posted_(shape.stages, shape.microBatches) {}

  void line(const std::string &code, SourceRange origin) {
    out_.text += code + "\n";
    out_.origins.push_back(origin);
  }
  // A statement in a rank's block, and the comment its line ends with.
  void statement(const CodeText &code, const std::string &comment, SourceRange origin) {
    if (!tables_)
      line("    " + code.text() + (code.empty() || comment.empty() ? "" : " ") + comment, origin);
    else if (!code.empty())
      tables_->add(code, origin);
  }
  // One cell of rank `rank`'s row; false if it cannot mean anything (reported). An
  // overlapped pair's receives come first, its computations overlapped, then its sends.
  bool cell(int64_t rank, const Cell &cell) {
    current_ = &cell;
    // (Each made where it stays: moving a Parts copies its fragments.)
    Parts first = action(rank, cell.actions[0], cell.range);
    Parts second = cell.actions.size() == 2 ? action(rank, cell.actions[1], cell.range) : Parts{};
    if (first.failed || second.failed)
      return false;
    CodeText &code = cellCode_;
    code.clear();
    auto add = [&code](const CodeText &part) {
      if (!part.empty())
        (code.empty() ? code : code.add(" ")).add(part);
    };
    if (cell.actions.size() == 1) {
      add(first.before), add(first.compute), add(first.after);
    } else {
      add(first.before), add(second.before);
      add(CodeText().add("overlap {{ ").add(first.compute).add(" }} with {{ ").add(second.compute).add(" }}"));
      add(first.after), add(second.after);
    }
    ActionType type = cell.actions[0].type;
    bool posted = type == ActionType::RecvF || type == ActionType::RecvB;
    statement(code,
              tables_ ? std::string()
                      : "// " + spell(cell) +
                            (posted ? ": a receive posted; the computation that needs it waits for it" : "") +
                            (!shape_.fsdp ? plainNote(type, shape_.replicated) : "") +
                            (*cell.insertedBy ? std::string(" (added: ") + cell.insertedBy + ")" : ""),
              cell.range);
    return true;
  }
  // The start of rank `rank`'s block (row `row` of the file): its stages' weights (or, with
  // FSDP, their shards) loaded.
  void startRow(int64_t rank, SourceRange row, size_t cells) {
    std::string condition = (shape_.replicas() ? "pp == " : "rank == ") + std::to_string(rank);
    if (tables_)
      tables_->startRow(condition, row, cells + 2 * stagesOf(rank).size());
    else
      line("  if " + condition + " {", row);
    for (int64_t s : stagesOf(rank))
      statement(CodeText().add(shape_.fsdp ? "for l in {0} * per..{1} * per {{ ws[l], opt[l] = load(l, shard = "
                                             "replica, of = dp); }}"
                                           : "for l in {0} * per..{1} * per {{ w[l], opt[l] = load(l); }}",
                               s, s + 1),
                {}, row);
  }
  // The end of the block: a receive posted and never waited for is waited for here, then
  // each stage with a weight gradient is updated (a stage with none is not: the check says
  // so); with FSDP, a stage's gradient must have been reduced (false, reported, if not).
  bool endRow(int64_t rank, SourceRange row) {
    posted_.forEach([&](bool gradient, int64_t s, int64_t mb, SourceRange at) {
      statement(gradient ? recvB(s, mb) : recvF(s, mb), "// never waited for", at);
    });
    bool ok = true;
    for (int64_t s : stagesOf(rank)) {
      if (shape_.firstGradient[static_cast<size_t>(s)] < 0)
        continue;
      if (shape_.replicas() && !reduced_.count(s)) {
        diags_.error(row, fmt::format("stage {0}'s gradient is never reduced over the replicas: the row has no "
                                      "`{0}REDUCE_GRAD` after its last weight gradient",
                                      s));
        ok = false;
        continue;
      }
      statement(CodeText().add(shape_.fsdp ? "for l in {0} * per..{1} * per {{ ws[l], opt[l] = update(l, gw[l], "
                                             "ws[l], opt[l]); free gw[l]; }}"
                                           : "for l in {0} * per..{1} * per {{ w[l], opt[l] = update(l, gw[l], w[l], "
                                             "opt[l]); free gw[l]; }}",
                               s, s + 1),
                {}, row);
    }
    if (!tables_)
      line("  }", row);
    posted_.clear(), unsharded_.clear(), reduced_.clear(), gradients_.clear(), made_.clear(), sent_.clear();
    return ok;
  }
  ImportedSchedule take() { return std::move(out_); }

  // What PyTorch's runtime does with an FSDP action on a stage that is not FSDP
  // (schedules.py, _PipelineScheduleRuntime._step_microbatches; stage.py, perform_reduce_grad).
  static const char *plainNote(ActionType type, bool replicated) {
    if (type == ActionType::Unshard || type == ActionType::Reshard)
      return ": the stage is not FSDP, so PyTorch's runtime does nothing here";
    if (type == ActionType::ReduceGrad && replicated)
      return ": the stage is replicated, so PyTorch's runtime all-reduces its gradient over the replicas here";
    if (type == ActionType::ReduceGrad)
      return ": the stage is not FSDP, so PyTorch's runtime only scales its gradients here";
    return "";
  }

private:
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
  CodeText &peer(CodeText &code, int64_t rank) const {
    return shape_.replicas() ? code.add("rank_at(pp = {0})", rank) : code.add("{0}", rank);
  }
  // Whether this file lets the schedule pass stage s's messages itself (compute only) to a rank.
  bool implied(int64_t rank, int64_t s) const { return !shape_.comms && owner(s) != rank; }
  CodeText accumulate(const Action &a) const {
    bool firstOne = shape_.firstGradient[static_cast<size_t>(a.stage)] == a.microBatch;
    return CodeText().add(firstOne ? "gw[l] = gw[l, {0}]; free gw[l, {0}];"
                                   : "gw[l] = gw[l] + gw[l, {0}]; free gw[l, {0}];",
                          a.microBatch);
  }

  CodeText sendF(int64_t s, int64_t mb) const {
    CodeText code;
    return peer(code.add("send("), owner(s + 1))
        .add(", act[{0} * per, {1}], tag = {2}); free act[{0} * per, {1}];", s + 1, mb, shape_.forwardTag(s + 1, mb));
  }
  CodeText recvF(int64_t s, int64_t mb) const {
    CodeText code;
    return peer(code.add("act[{0} * per, {1}] = recv(", s, mb), owner(s - 1))
        .add(", tag = {0});", shape_.forwardTag(s, mb));
  }
  CodeText postF(int64_t s, int64_t mb) const {
    CodeText code;
    return peer(code.add("post_recv("), owner(s - 1)).add(", tag = {0});", shape_.forwardTag(s, mb));
  }
  CodeText postB(int64_t s, int64_t mb) const {
    CodeText code;
    return peer(code.add("post_recv("), owner(s + 1)).add(", tag = {0});", shape_.gradientTag(s, mb));
  }
  CodeText sendB(int64_t s, int64_t mb) const {
    CodeText code;
    return peer(code.add("send("), owner(s - 1))
        .add(", gact[{0} * per, {1}], tag = {2}); free gact[{0} * per, {1}];", s, mb, shape_.gradientTag(s - 1, mb));
  }
  CodeText recvB(int64_t s, int64_t mb) const {
    CodeText code;
    return peer(code.add("gact[{0} * per, {1}] = recv(", s + 1, mb), owner(s + 1))
        .add(", tag = {0});", shape_.gradientTag(s, mb));
  }

  // Whether the file posted the receive (gradient or not, stage, micro-batch) that a
  // computation waits for; it is then done.
  bool waitFor(bool gradient, int64_t s, int64_t mb) { return posted_.erase(gradient, s, mb); }
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
  struct Parts {
    CodeText before, compute, after;
    bool failed = false; // the action means nothing (reported)
    static Parts failure() { return Parts{{}, {}, {}, true}; }
  };

  Parts forward(int64_t rank, int64_t s, int64_t mb) {
    Parts code;
    if (s == 0 && shape_.replicas()) // replica d takes micro-batches d M to d M + M - 1
      code.before.add("act[0, {0}] = input({{replica * {1} + {0}}});", mb, shape_.microBatches);
    else if (s == 0)
      code.before.add("act[0, {0}] = input({{{0}}});", mb);
    else if (owner(s - 1) != rank) // received here (a file with receives posted it before)
      code.before = recvF(s, mb);
    code.compute.add("for l in {0} * per..{1} * per {{ act[l + 1, {2}] = forward(l, act[l, {2}], w[l]); }}", s, s + 1,
                     mb);
    if (s + 1 < shape_.stages && implied(rank, s + 1))
      code.after = sendF(s, mb);
    return code;
  }
  // A backward (or its input half) `compute` with what it starts with (the loss, or the
  // gradient received) and ends with (the input's gradient dropped at stage 0, or sent back).
  Parts backwardOf(int64_t rank, int64_t s, int64_t mb, const CodeText &compute) const {
    Parts code;
    if (s + 1 == shape_.stages)
      code.compute.add("gact[layers, {0}] = loss(act[layers, {0}]); free act[layers, {0}]; ", mb);
    else if (owner(s + 1) != rank)
      code.before = recvB(s, mb);
    code.compute.add(compute);
    if (s == 0)
      code.compute.add(" free gact[0, {0}];", mb);
    else if (implied(rank, s - 1))
      code.after = sendB(s, mb);
    return code;
  }

  // The code of one action (none for a receive posted), or a failure if it means nothing
  // (reported).
  Parts action(int64_t rank, const Action &a, SourceRange at) {
    int64_t s = a.stage, mb = a.microBatch;
    bool backward = makesInputGradient(a.type);
    if (a.type == ActionType::Forward || backward) // (made for what sends it, even where reported below)
      made_.mark(backward, s, mb, at);
    if ((a.type == ActionType::Forward || backward) && !received(rank, backward, s, mb, at))
      return Parts::failure();
    if (!hasMicroBatch(a.type) && (!shape_.replicas() || (!shape_.fsdp && a.type != ActionType::ReduceGrad)))
      return Parts{}; // UNSHARD and RESHARD do nothing but on FSDP stages, REDUCE_GRAD of plain ones only scales
    if (!hasMicroBatch(a.type))
      return fsdpAction(rank, a, at);
    if (isCompute(a.type) && !fsdpReady(a, at))
      return Parts::failure();
    switch (a.type) {
    case ActionType::Forward: return forward(rank, s, mb);
    case ActionType::BackwardWeight:
      return Parts{{},
                   CodeText()
                       .add("for l in reversed({0} * per..{1} * per) {{ gw[l, {2}] = backward_weight(l, act[l, {2}], "
                            "gact[l + 1, {2}], w[l]); free act[l, {2}], gact[l + 1, {2}]; ",
                            s, s + 1, mb)
                       .add(accumulate(a))
                       .add(" }}"),
                   {}};
    case ActionType::SendF:
      if (!exchanges(rank, s, s + 1, at) || !sendable(a, at))
        return Parts::failure();
      return Parts{{}, {}, sendF(s, mb)};
    case ActionType::SendB:
      if (!exchanges(rank, s, s - 1, at) || !sendable(a, at))
        return Parts::failure();
      return Parts{{}, {}, sendB(s, mb)};
    case ActionType::RecvF:
    case ActionType::RecvB: {
      bool gradient = a.type == ActionType::RecvB;
      if (!exchanges(rank, s, gradient ? s + 1 : s - 1, at))
        return Parts::failure();
      if (!posted_.mark(gradient, s, mb, at)) {
        diags_.error(at, fmt::format("`{}` is posted again before anything waits for the first", spell(Cell{{a}, {}})))
            .note(*posted_.find(gradient, s, mb), "first posted here");
        return Parts::failure();
      }
      return Parts{{}, gradient ? postB(s, mb) : postF(s, mb), {}};
    }
    default: break;
    }
    if (shape_.inputHalf(a))
      return backwardOf(rank, s, mb,
                        CodeText().add("for l in reversed({0} * per..{1} * per) {{ gact[l, {2}] = backward_input(l, "
                                       "act[l, {2}], gact[l + 1, {2}], w[l]); }}",
                                       s, s + 1, mb));
    return backwardOf(rank, s, mb,
                      CodeText()
                          .add("for l in reversed({0} * per..{1} * per) {{ gw[l, {2}], gact[l, {2}] = backward(l, "
                               "act[l, {2}], gact[l + 1, {2}], w[l]); free gact[l + 1, {2}], act[l, {2}]; ",
                               s, s + 1, mb)
                          .add(accumulate(a))
                          .add(" }}"));
  }

  // With replicas, whether a computation finds its stage's parameters gathered (FSDP) and,
  // if it makes a weight gradient, the gradient not reduced yet (reported if not); counts
  // the gradient.
  bool fsdpReady(const Action &a, SourceRange at) {
    if (!shape_.replicas())
      return true;
    int64_t s = a.stage;
    if (shape_.fsdp && !unsharded_.count(s)) {
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
  // REDUCE_GRAD (its gradient reduce-scattered over them, all-reduced where the stages are
  // replicated), or a failure (reported) where the row has no such stage or the action
  // cannot come here.
  Parts fsdpAction(int64_t rank, const Action &a, SourceRange at) {
    int64_t s = a.stage;
    std::string spelt = spell(Cell{{a}, {}});
    if (s >= shape_.stages || owner(s) != rank) {
      diags_.error(at, fmt::format("`{}`: stage {} is not computed in this row (rank {}), so its parameters are not "
                                   "this rank's",
                                   spelt, s, rank));
      return Parts::failure();
    }
    switch (a.type) {
    case ActionType::Unshard:
      if (auto [it, fresh] = unsharded_.emplace(s, at); !fresh) {
        diags_.error(at, fmt::format("`{}`: stage {} is unsharded already", spelt, s))
            .note(it->second, "unsharded here, and not resharded since");
        return Parts::failure();
      }
      return Parts{
          {},
          CodeText().add("for l in {0} * per..{1} * per {{ w[l] = allgather(ws[l], group = replica); }}", s, s + 1),
          {}};
    case ActionType::Reshard:
      if (!unsharded_.erase(s)) {
        diags_.error(at, fmt::format("`{0}`: stage {1} is not unsharded here (no `{1}UNSHARD` since its last RESHARD)",
                                     spelt, s));
        return Parts::failure();
      }
      return Parts{{}, CodeText().add("for l in {0} * per..{1} * per {{ free w[l]; }}", s, s + 1), {}};
    default: break;
    }
    if (auto it = reduced_.find(s); it != reduced_.end()) {
      diags_.error(at, fmt::format("`{}`: stage {}'s gradient is reduced already", spelt, s))
          .note(it->second, "reduced here");
      return Parts::failure();
    }
    if (int64_t made = gradients_[s]; made < shape_.microBatches) {
      diags_.error(at, fmt::format("`{}` comes after {} of stage {}'s {} weight gradients: the rest would miss the "
                                   "reduction",
                                   spelt, made, s, shape_.microBatches));
      return Parts::failure();
    }
    reduced_.emplace(s, at);
    return Parts{{},
                 CodeText().add(
                     shape_.fsdp ? "for l in {0} * per..{1} * per {{ gw[l] = reducescatter(gw[l], group = replica); }}"
                                 : "for l in {0} * per..{1} * per {{ gw[l] = allreduce(gw[l], group = replica); }}",
                     s, s + 1),
                 {}};
  }

  // Whether a SEND_F (SEND_B) finds the stage's output (input gradient) made earlier in the
  // row and not sent yet (reported if not), as PyTorch's runtime needs it.
  bool sendable(const Action &a, SourceRange at) {
    if (*current_->insertedBy) // added after its computation: what is wrong is reported there
      return true;
    bool gradient = a.type == ActionType::SendB;
    if (const SourceRange *first = sent_.find(gradient, a.stage, a.microBatch)) {
      diags_
          .error(at, fmt::format("`{}` sends stage {}'s {} of micro-batch {} a second time", spell(Cell{{a}, {}}),
                                 a.stage, gradient ? "input gradient" : "output", a.microBatch))
          .note(*first, "first sent here");
      return false;
    }
    if (!made_.find(gradient, a.stage, a.microBatch)) {
      diags_.error(at, fmt::format("`{}` sends stage {}'s {} of micro-batch {}, but no `{}{}{}` earlier in this row "
                                   "makes it",
                                   spell(Cell{{a}, {}}), a.stage, gradient ? "input gradient" : "output", a.microBatch,
                                   a.stage, gradient ? (shape_.inputActions ? "I" : "B") : "F", a.microBatch));
      return false;
    }
    sent_.mark(gradient, a.stage, a.microBatch, at);
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
  RowTables *tables_; // null: one line a statement
  CodeText cellCode_; // the cell's being written (its room kept from cell to cell)
  ImportedSchedule out_;
  MessageMarks posted_;                                // receives the row posted
  std::map<int64_t, SourceRange> unsharded_, reduced_; // FSDP: stages gathered, gradients reduced (where)
  std::map<int64_t, int64_t> gradients_;               // stage -> weight gradients made so far
  // (gradient or not, stage, micro-batch): outputs and input gradients the row made, and sent (where)
  MessageMarks made_{shape_.stages, shape_.microBatches};
  const Cell *current_ = nullptr; // the cell being written
  MessageMarks sent_{shape_.stages, shape_.microBatches};
};

constexpr std::array<std::string_view, 27> kReserved{
    "import",   "schedule", "proc",    "let",     "free",  "if",   "else",   "for",  "in",
    "reversed", "mesh",     "require", "true",    "false", "del",  "and",    "or",   "not",
    "rank",     "ranks",    "layers",  "batches", "held",  "size", "device", "host", "nvme"};

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
  if (!sh.replicas()) {
    w.line(fmt::format("schedule {}(layers = {}, batches = {}, ranks = {}) {{", name, sh.stages, sh.microBatches,
                       sh.ranks),
           top);
  } else {
    w.line(fmt::format("// {}: the file is one of `dp` data-parallel replicas (mesh axis `replica`), each the file's "
                       "ranks (axis `pp`);",
                       sh.fsdp ? "FSDP" : "Replicated stages"),
           top);
    w.line(fmt::format("// replica d takes micro-batches d * {0} to d * {0} + {1} and keeps {2}.", sh.microBatches,
                       sh.microBatches - 1,
                       sh.fsdp ? "a 1/dp shard of its stages' weights (ws)" : "its stages' whole weights"),
           top);
    w.line(fmt::format("schedule {}(layers = {}, dp = 2, batches = {} * dp, ranks = {} * dp) {{", name, sh.stages,
                       sh.microBatches, sh.ranks),
           top);
  }
  w.line(fmt::format("  require(layers % {0} == 0, \"the file has {0} stages: `layers` must be a multiple of {0}\");",
                     sh.stages),
         top);
  if (!sh.replicas()) {
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

std::optional<ImportedSchedule> importSchedule(ActionTable table, const std::string &name, const std::string &from,
                                               const ImportOptions &opts, DiagnosticEngine &diags) {
  std::optional<Shape> shape = shapeOf(table, diags);
  if (!shape)
    return std::nullopt;
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
  auto tables = opts.tables ? std::make_unique<RowTables>() : nullptr;
  Writer w(sh, diags, tables.get());
  writeHeader(w, sh, name, from, top);
  bool ok = true;
  for (int64_t r = 0; r < sh.ranks; ++r) {
    SourceRange row = table.rowRanges[static_cast<size_t>(r)];
    w.startRow(r, row, table.rows[static_cast<size_t>(r)].size());
    for (const Cell &cell : table.rows[static_cast<size_t>(r)])
      ok = w.cell(r, cell) && ok;
    ok = w.endRow(r, row) && ok;
  }
  if (tables)
    tables->writeBody("}", top, [&w](const std::string &code, SourceRange at) { w.line(code, at); });
  else
    w.line("}", top);
  if (!ok)
    return std::nullopt;
  ImportedSchedule out = w.take();
  out.tables = std::move(tables);
  out.tagMeaning = [sh](int64_t tag) { return sh.tagMeaning(tag); };
  out.reading = readingOf(sh, opts);
  return out;
}

} // namespace schedc::interop

namespace schedc::interop {

ImportedSchedule::ImportedSchedule() = default;
ImportedSchedule::ImportedSchedule(ImportedSchedule &&) noexcept = default;
ImportedSchedule &ImportedSchedule::operator=(ImportedSchedule &&) noexcept = default;
ImportedSchedule::~ImportedSchedule() = default;

std::optional<uint32_t> addImported(uint32_t csv, const ImportOptions &opts, SourceManager &sources,
                                    DiagnosticEngine &diags, ImportedSchedule *facts) {
  std::optional<ActionTable> table = readActionTable(csv, sources, diags);
  if (!table)
    return std::nullopt;
  const std::string &path = sources.name(csv);
  std::optional<ImportedSchedule> imported = importSchedule(
      std::move(*table), scheduleNameFor(path), std::filesystem::path(path).filename().string(), opts, diags);
  if (!imported)
    return std::nullopt;
  uint32_t id = sources.addDerived(path + ".sched", std::move(imported->text), std::move(imported->origins));
  if (facts) {
    facts->tagMeaning = std::move(imported->tagMeaning);
    facts->reading = std::move(imported->reading);
    facts->tables = std::move(imported->tables);
  }
  return id;
}

} // namespace schedc::interop
