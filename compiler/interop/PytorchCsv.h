// PytorchCsv — PyTorch's pipeline schedule files (torch.distributed.pipelining writes them
// with _dump_csv and reads them with _load_csv; torchtitan runs one from
// parallelism.pipeline_parallel_schedule_csv): one row per rank, one action per cell, an
// empty cell an idle slot. An action is <stage><type><micro-batch>, e.g. `0F1`, `2I3`,
// `3SEND_F1`, `1UNSHARD`; `(0F7;7B3)OVERLAP_F_B` runs a forward and a backward together.
// This file reads such a table (every problem located at its row and cell) and writes one.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "diagnostics/InternalError.h"

#include <boost/container/static_vector.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace schedc::interop {

enum class ActionType : uint8_t {
  Forward,        // F
  BackwardInput,  // I
  BackwardWeight, // W
  Backward,       // B: the whole backward, or (older files) the input half where a W of
                  // the same stage and micro-batch follows
  FullBackward,   // BW (older files' whole backward)
  SendF,          // SEND_F: a stage's output to the next stage
  RecvF,          // RECV_F: a stage's input from the previous stage
  SendB,          // SEND_B: a stage's input gradient to the previous stage
  RecvB,          // RECV_B: a stage's output gradient from the next stage
  Unshard,        // UNSHARD: FSDP's all-gather of a stage's parameters (no micro-batch)
  Reshard,        // RESHARD: FSDP's free of them
  ReduceGrad,     // REDUCE_GRAD: a stage's gradient reduction
};

// The type's spelling in a file.
const char *spelling(ActionType t);
// Whether a type names a micro-batch.
bool hasMicroBatch(ActionType t);

// (Numbers in a file are at most 1 000 000: 32 bits, so that a cell stays small.)
struct Action {
  int32_t stage = 0;
  ActionType type = ActionType::Forward;
  int32_t microBatch = -1; // -1: none
};
// An action of a run's stage and micro-batch indices (each an index into a vector of them,
// so within 32 bits).
inline Action makeAction(int64_t stage, ActionType type, int64_t microBatch) {
  SCHEDC_ASSERT(stage >= 0 && stage <= INT32_MAX && microBatch >= -1 && microBatch <= INT32_MAX,
                "a stage or micro-batch past 32 bits");
  return Action{static_cast<int32_t>(stage), type, static_cast<int32_t>(microBatch)};
}

// A cell's actions, kept in the cell (no allocation a cell: a large file has one a cell of
// each rank's micro-batches' actions).
using Actions = boost::container::static_vector<Action, 2>;

// A non-empty cell: one action, or two run together (OVERLAP_F_B: a forward, then a backward).
struct Cell {
  Actions actions;
  SourceRange range; // the cell in the file (of the cell that caused it, if inserted)
  // Added by a lowering, not written in the file: "" if written, else what added it (its
  // comment in the imported schedule).
  const char *insertedBy = "";
  int32_t idleBefore = 0; // empty cells right before it in its row (PyTorch's None actions)
};

// The table: rows[r] is rank r's cells in order (idle slots dropped).
struct ActionTable {
  std::vector<std::vector<Cell>> rows;
  std::vector<SourceRange> rowRanges; // each row's text (for what belongs to a row, not a cell)
};

// Reads the file `file` of `sources` as a table. Reports every malformed cell (its row and
// column) and returns nullopt if there was one.
std::optional<ActionTable> readActionTable(uint32_t file, const SourceManager &sources, DiagnosticEngine &diags);

// The first cell (row by row) holding an action `pred` says yes to, or null.
const Cell *firstCellWith(const ActionTable &table, const std::function<bool(const Action &)> &pred);

// The table as a file: rows of comma-separated actions, "\n" after each row.
std::string writeActionTable(const std::vector<std::vector<Cell>> &rows);
std::string spell(const Cell &cell);

} // namespace schedc::interop
