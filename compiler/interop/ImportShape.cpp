// ImportShape implementation: one pass over the table for the stages' owners and sizes,
// then the checks that every action's inputs are made in the file.
#include "interop/ImportShape.h"

#include "engine/World.h"

#include <fmt/format.h>

#include <algorithm>

namespace schedc::interop {

namespace {

constexpr int64_t kTags = sim::Rank::kMaxTag + 1; // the tags a schedule has

// Whether every action that takes a value has an action in the file that makes it: a
// backward or SEND_F its forward, a W or SEND_B the input half (I, B or BW) of the same stage
// and micro-batch; and every input half its W (else a weight gradient misses a micro-batch);
// reports each that has not. (A file of forwards alone, or of Ws alone, is
// no training step: this says so at the cell, where the schedule would read values nothing
// in it makes.)
bool eachActionHasItsMaker(const ActionTable &table, const Shape &shape, DiagnosticEngine &diags) {
  // What the file makes of each (stage, micro-batch), as bits: a dense table (a large file
  // has a cell for each of its ranks' micro-batches' actions).
  enum : uint8_t { kForward = 1, kWeightHalf = 2, kInputGradient = 4 };
  std::vector<uint8_t> made(static_cast<size_t>(shape.stages * shape.microBatches), 0);
  auto at = [&](const Action &a) -> uint8_t & {
    return made[static_cast<size_t>(a.stage * shape.microBatches + a.microBatch)];
  };
  for (const std::vector<Cell> &row : table.rows)
    for (const Cell &cell : row)
      for (const Action &a : cell.actions) {
        if (a.type == ActionType::Forward)
          at(a) |= kForward;
        if (a.type == ActionType::BackwardWeight)
          at(a) |= kWeightHalf;
        if (makesInputGradient(a.type))
          at(a) |= kInputGradient;
      }
  bool ok = true;
  for (const std::vector<Cell> &row : table.rows)
    for (const Cell &cell : row)
      for (const Action &a : cell.actions) {
        bool needsGradient = a.type == ActionType::BackwardWeight || a.type == ActionType::SendB;
        bool needsForward = a.type == ActionType::SendF || makesInputGradient(a.type);
        bool half = shape.inputHalf(a);
        if (!half && !needsGradient && !needsForward)
          continue;
        uint8_t bits = at(a);
        if (half && !(bits & kWeightHalf)) { // its weight gradient is never computed
          diags.error(cell.range, fmt::format("`{}` is an input-gradient half with no weight half `{}W{}` anywhere in "
                                              "the file: stage {}'s weight gradient would miss micro-batch {}",
                                              spell(Cell{{a}, {}}), a.stage, a.microBatch, a.stage, a.microBatch));
          ok = false;
          continue;
        }
        if ((!needsGradient || (bits & kInputGradient)) && (!needsForward || (bits & kForward)))
          continue;
        diags.error(cell.range, needsGradient
                                    ? fmt::format("`{}` has no input-gradient half (`{}I{}` or `{}B{}`) anywhere in "
                                                  "the file: it takes the gradient that computes",
                                                  spell(Cell{{a}, {}}), a.stage, a.microBatch, a.stage, a.microBatch)
                                    : fmt::format("`{}` has no forward `{}F{}` anywhere in the file",
                                                  spell(Cell{{a}, {}}), a.stage, a.microBatch));
        ok = false;
      }
  return ok;
}

} // namespace

bool isCompute(ActionType t) {
  return t == ActionType::Forward || t == ActionType::BackwardInput || t == ActionType::BackwardWeight ||
         t == ActionType::Backward || t == ActionType::FullBackward;
}

bool makesInputGradient(ActionType t) {
  return isCompute(t) && t != ActionType::Forward && t != ActionType::BackwardWeight;
}

bool isTransfer(ActionType t) {
  return t == ActionType::SendF || t == ActionType::RecvF || t == ActionType::SendB || t == ActionType::RecvB;
}

std::string Shape::tagMeaning(int64_t tag) const {
  int64_t messages = tag / microBatches, mb = tag % microBatches, s = messages / 2;
  if (tag < 0 || s >= stages)
    return "";
  return messages % 2 == 0
             ? fmt::format("stage {0}'s input of micro-batch {1}, `{0}RECV_F{1}`", s, mb)
             : fmt::format("the gradient of stage {0}'s output of micro-batch {1}, `{0}RECV_B{1}`", s, mb);
}

std::string Shape::placement() const {
  bool looped = true, vShaped = stages == 2 * ranks;
  for (int64_t s = 0; s < stages; ++s) {
    looped = looped && owner[static_cast<size_t>(s)] == s % ranks;
    vShaped = vShaped && owner[static_cast<size_t>(s)] == (s < ranks ? s : 2 * ranks - 1 - s);
  }
  return looped ? "looped" : vShaped ? "V-shaped" : "as the file places them";
}

std::optional<Shape> shapeOf(const ActionTable &table, DiagnosticEngine &diags) {
  Shape shape;
  shape.ranks = static_cast<int64_t>(table.rows.size());
  std::vector<std::pair<int64_t, SourceRange>> owner; // stage -> (rank, where first seen)
  bool ok = true;
  for (size_t r = 0; r < table.rows.size(); ++r)
    for (const Cell &cell : table.rows[r])
      for (const Action &a : cell.actions) {
        if (!hasMicroBatch(a.type)) { // FSDP's: checked where they come (ImportSchedule's Writer)
          shape.fsdpActions = shape.fsdpActions || a.type == ActionType::Unshard || a.type == ActionType::Reshard;
          continue;
        }
        shape.stages = std::max<int64_t>(shape.stages, a.stage + 1);
        shape.microBatches = std::max<int64_t>(shape.microBatches, a.microBatch + 1);
        shape.comms = shape.comms || isTransfer(a.type);
        if (a.type == ActionType::BackwardWeight)
          shape.weightHalves.insert(a.stage);
        shape.inputActions = shape.inputActions || a.type == ActionType::BackwardInput;
        if (!isCompute(a.type))
          continue;
        if (owner.size() <= static_cast<size_t>(a.stage))
          owner.resize(static_cast<size_t>(a.stage) + 1, {-1, {}});
        auto &[rank, seen] = owner[static_cast<size_t>(a.stage)];
        if (rank >= 0 && rank != static_cast<int64_t>(r)) {
          diags
              .error(cell.range, fmt::format("stage {} is computed on rank {} (row {}) and here on rank {} (row {}): "
                                             "a stage belongs to one rank",
                                             a.stage, rank, rank + 1, r, r + 1))
              .note(seen, "stage " + std::to_string(a.stage) + " first computed here");
          ok = false;
        } else if (rank < 0) {
          rank = static_cast<int64_t>(r);
          seen = cell.range;
        }
      }
  if (!ok)
    return std::nullopt;
  if (shape.stages == 0) {
    diags.error(table.rowRanges.front(), "the file has no forward or backward: nothing to import");
    return std::nullopt;
  }
  owner.resize(static_cast<size_t>(shape.stages), {-1, {}});
  int64_t missing = 0, first = -1; // stages no row computes (one message for all)
  for (int64_t s = 0; s < shape.stages; ++s)
    if (owner[static_cast<size_t>(s)].first < 0 && missing++ == 0)
      first = s;
  if (missing > 0) {
    diags.error(table.rowRanges.front(),
                fmt::format("stage {} is computed in no row{}: the file's stages are numbered 0 to {}, and each "
                            "needs a forward",
                            first, missing > 1 ? fmt::format(" (nor are {} more)", missing - 1) : "",
                            shape.stages - 1));
    ok = false;
  }
  if (ok && 2 * shape.stages * shape.microBatches > kTags) {
    diags.error(table.rowRanges.front(),
                fmt::format("{} stages x {} micro-batches need {} message tags; a schedule has {}", shape.stages,
                            shape.microBatches, 2 * shape.stages * shape.microBatches, kTags));
    ok = false;
  }
  if (!ok)
    return std::nullopt;
  for (const auto &[rank, seen] : owner)
    shape.owner.push_back(rank);
  shape.firstGradient.assign(static_cast<size_t>(shape.stages), -1);
  for (const std::vector<Cell> &row : table.rows)
    for (const Cell &cell : row)
      for (const Action &a : cell.actions)
        if (shape.makesWeightGradient(a) && shape.firstGradient[static_cast<size_t>(a.stage)] < 0)
          shape.firstGradient[static_cast<size_t>(a.stage)] = a.microBatch;
  if (!eachActionHasItsMaker(table, shape, diags))
    return std::nullopt;
  return shape;
}

} // namespace schedc::interop
