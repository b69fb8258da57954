// ImportShape — what a PyTorch schedule table is, before it becomes a schedule: its stages
// and the rank whose row computes each, its micro-batches, which backwards are input halves,
// whether it has its sends and receives or FSDP actions, and each message's tag; shapeOf
// also checks that whatever an action takes is made somewhere in the file (reported at the
// cell).
#pragma once

#include "interop/PytorchCsv.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace schedc::interop {

// F, I, W, B and BW: a computation of a stage.
bool isCompute(ActionType t);
// SEND_F, RECV_F, SEND_B, RECV_B.
bool isTransfer(ActionType t);
// I, B and BW: a computation that makes its stage's input gradient (and takes the gradient
// of its output).
bool makesInputGradient(ActionType t);

struct Shape {
  int64_t stages = 0, microBatches = 0, ranks = 0;
  std::vector<int64_t> owner;         // stage -> rank
  std::set<int64_t> weightHalves;     // stages with a W
  bool inputActions = false;          // the file writes input halves as I (then B is whole)
  std::vector<int64_t> firstGradient; // stage -> the micro-batch of its first weight gradient
  bool comms = false;                 // the file has sends and receives (or was given them: lowered)
  bool lowered = false;               // a compute-only file given its sends and receives (CommsLowering.h)
  bool fsdp = false;                  // stages sharded over data-parallel replicas (set with FSDP's lowering)
  bool replicated = false;            // stages whole on each of the replicas (DDP-style `replicate`)
  bool fsdpActions = false;           // the file has UNSHARD or RESHARD (whether it is read as FSDP or not)

  // The file is one of `dp` data-parallel replicas (FSDP or replicated stages).
  bool replicas() const { return fsdp || replicated; }
  bool inputHalf(const Action &a) const {
    return a.type == ActionType::BackwardInput ||
           (a.type == ActionType::Backward && !inputActions && weightHalves.count(a.stage));
  }
  bool makesWeightGradient(const Action &a) const {
    return a.type == ActionType::BackwardWeight || a.type == ActionType::FullBackward ||
           (a.type == ActionType::Backward && !inputHalf(a));
  }
  // Tags: a forward message into stage s, and a gradient into stage s, per micro-batch.
  int64_t forwardTag(int64_t s, int64_t mb) const { return 2 * s * microBatches + mb; }
  int64_t gradientTag(int64_t s, int64_t mb) const { return (2 * s + 1) * microBatches + mb; }
  // What the message of `tag` carries ("stage 2's input of micro-batch 0, `2RECV_F0`"), or
  // "" for a tag no message has.
  std::string tagMeaning(int64_t tag) const;
  // Where the stages are: "looped", "V-shaped" or "as the file places them".
  std::string placement() const;
};

// The table's shape; reports what cannot be imported (a stage on two rows, a stage no row
// computes, too many tags, an action whose input nothing makes) and returns nullopt.
std::optional<Shape> shapeOf(const ActionTable &table, DiagnosticEngine &diags);

} // namespace schedc::interop
