// ExportSchedule — a checked run as a PyTorch pipeline schedule file, so that torchtitan can
// run a schedule designed and verified here. Read from what the run did, rank by rank:
// consecutive forwards (or backwards, or their halves) of one micro-batch through
// consecutive layers are one action per stage; a stage is a run of layers that no
// computation starts or ends inside. Forward -> F, backward -> B (the whole backward),
// backward_input -> I, backward_weight -> W; with sends and receives (`comms`), a send of a
// stage's output -> SEND_F, of its input gradient -> SEND_B, and the receives likewise.
// Loads, the loss, updates and frees have no action (PyTorch does them itself). With FSDP
// (all-gathers of weight shards, reduce-scatters of weight gradients over a data-parallel
// group) the rows are one replica's ranks, the all-gathers UNSHARD, the frees of gathered
// layers RESHARD and the reduce-scatters REDUCE_GRAD. What has no action — another
// collective, a computation on several micro-batches at once, a recomputed forward, a
// tensor-parallel part, a layer computed on two ranks of a replica — is an error at the
// statement that did it.
#pragma once

#include "engine/World.h"

#include <optional>
#include <string>
#include <vector>

namespace schedc::interop {

// The file's text, or nullopt with the reasons in `problems` (located diagnostics).
std::optional<std::string> exportSchedule(const sim::World &world, bool comms, std::vector<Diagnostic> &problems);

} // namespace schedc::interop
