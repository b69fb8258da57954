// FsdpLowering implementation: each row is rewritten on its own, as PyTorch lowers each
// rank's actions.
#include "interop/FsdpLowering.h"

#include <algorithm>
#include <map>
#include <set>

namespace schedc::interop {

namespace {

Cell stageCell(int64_t stage, ActionType type, SourceRange at) {
  Cell cell{{makeAction(stage, type, -1)}, at};
  cell.insertedBy = type == ActionType::ReduceGrad ? "PyTorch's _add_reduce_grad" : "PyTorch's _add_unshard_reshard";
  return cell;
}

// The next `count` distinct stages computed from `from` on (both of a pair's stages count,
// so a pair may make it one more, as in PyTorch).
std::vector<int64_t> nextStages(const std::vector<Cell> &row, size_t from, size_t count) {
  std::vector<int64_t> stages;
  for (size_t i = from; i < row.size() && stages.size() < count; ++i)
    for (const Action &a : row[i].actions)
      if (std::find(stages.begin(), stages.end(), a.stage) == stages.end())
        stages.push_back(a.stage);
  return stages;
}

} // namespace

void addUnshardReshard(ActionTable &table, size_t maxActive) {
  for (std::vector<Cell> &row : table.rows) {
    std::vector<Cell> lowered;
    std::set<int64_t> active;
    for (size_t i = 0; i < row.size(); ++i) {
      std::vector<int64_t> next = nextStages(row, i, maxActive);
      for (auto it = active.begin(); it != active.end();) {
        if (std::find(next.begin(), next.end(), *it) != next.end()) {
          ++it;
          continue;
        }
        lowered.push_back(stageCell(*it, ActionType::Reshard, row[i].range));
        it = active.erase(it);
      }
      for (int64_t s : next)
        if (active.insert(s).second)
          lowered.push_back(stageCell(s, ActionType::Unshard, row[i].range));
      lowered.push_back(row[i]);
    }
    for (int64_t s : active)
      lowered.push_back(stageCell(s, ActionType::Reshard, row.empty() ? SourceRange{} : row.back().range));
    row = std::move(lowered);
  }
}

void addReduceGrad(ActionTable &table, int64_t microBatches,
                   const std::function<bool(const Action &)> &makesWeightGradient) {
  for (std::vector<Cell> &row : table.rows) {
    std::vector<Cell> lowered;
    std::map<int64_t, int64_t> gradients; // stage -> weight gradients so far
    for (const Cell &cell : row) {
      lowered.push_back(cell);
      for (const Action &a : cell.actions)
        if (makesWeightGradient(a) && ++gradients[a.stage] == microBatches)
          lowered.push_back(stageCell(a.stage, ActionType::ReduceGrad, cell.range));
    }
    row = std::move(lowered);
  }
}

} // namespace schedc::interop
