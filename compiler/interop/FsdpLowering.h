// FsdpLowering — what PyTorch adds to a pipeline schedule whose stages are FSDP modules
// (torch.distributed.pipelining's _add_unshard_reshard and _add_reduce_grad, run by
// _PipelineScheduleRuntime on a compute-only file): UNSHARD (all-gather a stage's
// parameters over the data-parallel replicas), RESHARD (free them) and REDUCE_GRAD (reduce
// its gradient after its last weight gradient). Inserted cells carry the range of the cell
// that caused them, so what the checker finds there points into the file.
#pragma once

#include "interop/PytorchCsv.h"

#include <functional>

namespace schedc::interop {

// Before each computation of a row, the next `maxActive` distinct stages the row computes
// from there on (an OVERLAP_F_B pair's two stages both counting) are unsharded, in the order
// they come, after every other unsharded stage is resharded (in stage order); at the row's
// end every stage still unsharded is resharded. PyTorch's default is 3 active stages.
void addUnshardReshard(ActionTable &table, size_t maxActive = 3);

// A stage's REDUCE_GRAD right after its `microBatches`-th weight gradient in the row (the
// actions `makesWeightGradient` says yes to: W, or a whole backward).
void addReduceGrad(ActionTable &table, int64_t microBatches,
                   const std::function<bool(const Action &)> &makesWeightGradient);

} // namespace schedc::interop
