// GatherPieces — the cuda backend's all-gather of weight-sized pieces (ZeRO shards, parts'
// shards): every member's pieces put together, sorted by position, one piece when they are
// contiguous (the whole array, or a tensor-parallel part), ready for GEMMs. Each member's
// pieces' places go over MPI first (Comm::allgatherInts), then their elements in one NCCL
// gather (NcclGroups::gather) on `stream`.
#pragma once

#include "backend/Comm.h"
#include "cuda/DeviceCopies.h"
#include "cuda/Nccl.h"

#include <vector>

namespace schedc::cuda {

// `in`'s pieces and every other member's, the elements as `type`.
DeviceFlat gatherPieces(const DeviceFlat *in, const std::vector<int64_t> &group, DType type, DeviceCopies &copies,
                        NcclGroups &nccl, backend::Comm &comm, cudaStream_t stream);

} // namespace schedc::cuda
