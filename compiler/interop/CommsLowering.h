// CommsLowering — the sends and receives PyTorch's runtime adds to a compute-only pipeline
// schedule (torch/distributed/pipelining/schedules.py, _add_send_recv, run by
// _PipelineScheduleRuntime when it loads one), written here from its rules: the rows are
// played in rounds, each round giving every rank (in rank order) its next action if that
// action's input is there (an idle slot always is); a forward whose next stage is on
// another rank is followed by its SEND_F, and the RECV_F goes on that rank's row at the
// same moment (likewise a backward's input gradient, SEND_B and RECV_B). A receive thus
// comes in every row in the order its message is sent, and the rows are free of the
// stream hangs of ordered point-to-point (sim/PointToPoint.h) by construction.
// Inserted cells carry the range of the computation that caused them.
#pragma once

#include "interop/PytorchCsv.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace schedc::interop {

// Each row's input-gradient half followed at once (idle slots between them dropped) by the
// weight half of the same stage and micro-batch, made one whole backward of type `merged`
// (PyTorch's FULL_BACKWARD: B in its files now, BW in older ones), as PyTorch's _merge_bw
// does before it adds the sends and receives; `inputHalf` says which actions are input
// halves (I, or B in files that write W). Idle slots are dropped.
void mergeBackwardHalves(ActionTable &table, const std::function<bool(const Action &)> &inputHalf, ActionType merged);

// The table with its sends and receives, or nullopt where no round can go on (every row's
// next computation waits for an input no row will make first; PyTorch raises "Malformed
// compute schedule"): `stuck` then holds each unfinished row's next cell, by row (null for
// a finished row). `owner[s]` is the rank of stage s.
std::optional<ActionTable> addSendRecv(const ActionTable &computeOnly, const std::vector<int64_t> &owner,
                                       std::vector<const Cell *> *stuck = nullptr);

} // namespace schedc::interop
