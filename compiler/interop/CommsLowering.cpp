// CommsLowering implementation: PyTorch's rounds, played on the table's rows.
#include "interop/CommsLowering.h"

#include "interop/ImportShape.h"

#include <set>
#include <tuple>

namespace schedc::interop {

namespace {

using Done = std::set<std::tuple<int64_t, ActionType, int64_t>>; // (stage, type, micro-batch) a row has done

class Rounds {
public:
  Rounds(const std::vector<int64_t> &owner) : owner_(owner) {}

  int64_t stages() const { return static_cast<int64_t>(owner_.size()); }
  int64_t rankOf(int64_t s) const { return owner_[static_cast<size_t>(s)]; }

  // Whether a computation's input is on its rank: the first stage's forward and the last
  // stage's backward always; otherwise the received message, or the neighbouring stage's
  // computation on the same rank.
  bool ready(const Action &a, const Done &done) const {
    if (a.type == ActionType::Forward && a.stage > 0)
      return done.count({a.stage, ActionType::RecvF, a.microBatch}) ||
             done.count({a.stage - 1, ActionType::Forward, a.microBatch});
    if (makesInputGradient(a.type) && a.stage + 1 < stages()) {
      if (done.count({a.stage, ActionType::RecvB, a.microBatch}))
        return true;
      for (ActionType t : {ActionType::BackwardInput, ActionType::Backward, ActionType::FullBackward})
        if (done.count({a.stage + 1, t, a.microBatch}))
          return true;
      return false;
    }
    return true;
  }
  // The stage a computation's result goes to on another rank, or -1.
  int64_t sendsTo(const Action &a) const {
    if (a.type == ActionType::Forward && a.stage + 1 < stages() && rankOf(a.stage + 1) != rankOf(a.stage))
      return a.stage + 1;
    if (makesInputGradient(a.type) && a.stage > 0 && rankOf(a.stage - 1) != rankOf(a.stage))
      return a.stage - 1;
    return -1;
  }

private:
  const std::vector<int64_t> &owner_;
};

Cell insertedCell(Action a, SourceRange at) {
  Cell cell{{a}, at};
  cell.insertedBy = "PyTorch's _add_send_recv";
  return cell;
}

} // namespace

void mergeBackwardHalves(ActionTable &table, const std::function<bool(const Action &)> &inputHalf,
                         ActionType mergedType) {
  for (std::vector<Cell> &row : table.rows) {
    std::vector<Cell> merged;
    for (size_t i = 0; i < row.size(); ++i) {
      Cell cell = row[i];
      cell.idleBefore = 0;
      if (i + 1 < row.size() && cell.actions.size() == 1 && row[i + 1].actions.size() == 1) {
        const Action &a = cell.actions[0], &b = row[i + 1].actions[0];
        if (inputHalf(a) && b.type == ActionType::BackwardWeight && a.stage == b.stage &&
            a.microBatch == b.microBatch) {
          cell.actions[0].type = mergedType;
          ++i;
        }
      }
      merged.push_back(std::move(cell));
    }
    row = std::move(merged);
  }
}

std::optional<ActionTable> addSendRecv(const ActionTable &computeOnly, const std::vector<int64_t> &owner,
                                       std::vector<const Cell *> *stuck) {
  Rounds rounds(owner);
  size_t ranks = computeOnly.rows.size();
  // Each row as PyTorch's list: an idle slot (null) where the file has an empty cell.
  std::vector<std::vector<const Cell *>> slots(ranks);
  for (size_t r = 0; r < ranks; ++r)
    for (const Cell &cell : computeOnly.rows[r]) {
      slots[r].insert(slots[r].end(), static_cast<size_t>(cell.idleBefore), nullptr);
      slots[r].push_back(&cell);
    }
  ActionTable out;
  out.rows.resize(ranks);
  out.rowRanges = computeOnly.rowRanges;
  std::vector<Done> done(ranks);
  std::vector<size_t> next(ranks, 0);
  for (;;) {
    bool left = false, progress = false;
    for (size_t r = 0; r < ranks; ++r) {
      if (next[r] == slots[r].size())
        continue;
      left = true;
      const Cell *cell = slots[r][next[r]];
      if (cell) {
        bool ready = true;
        for (const Action &a : cell->actions)
          ready = ready && rounds.ready(a, done[r]);
        if (!ready)
          continue;
        out.rows[r].push_back(*cell);
        out.rows[r].back().idleBefore = 0;
        for (const Action &a : cell->actions)
          done[r].insert({a.stage, a.type, a.microBatch});
        for (const Action &a : cell->actions) {
          int64_t to = rounds.sendsTo(a);
          if (to < 0)
            continue;
          bool forward = a.type == ActionType::Forward;
          Action send{a.stage, forward ? ActionType::SendF : ActionType::SendB, a.microBatch};
          Action recv = makeAction(to, forward ? ActionType::RecvF : ActionType::RecvB, a.microBatch);
          auto peer = static_cast<size_t>(rounds.rankOf(to));
          out.rows[r].push_back(insertedCell(send, cell->range));
          done[r].insert({send.stage, send.type, send.microBatch});
          out.rows[peer].push_back(insertedCell(recv, cell->range));
          done[peer].insert({recv.stage, recv.type, recv.microBatch});
        }
      }
      ++next[r];
      progress = true;
    }
    if (!left)
      return out;
    if (!progress) {
      if (stuck)
        for (size_t r = 0; r < ranks; ++r)
          stuck->push_back(next[r] < slots[r].size() ? slots[r][next[r]] : nullptr);
      return std::nullopt;
    }
  }
}

} // namespace schedc::interop
