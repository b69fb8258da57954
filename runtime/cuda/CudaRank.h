// CudaRank — the cuda backend's ComputeRank: the model of the cpu backend (same data, same
// arithmetic, same shards) on the GPU of this MPI process. GEMMs are cuBLAS's (fp32, or
// TF32 tensor cores with --tf32), the element-wise steps are cuda/Kernels, collectives go
// through NCCL (cuda/Nccl), every byte through cuda/DeviceMemory, everything on one stream
// in the schedule's order. Point-to-point messages are staged through the host and sent with
// MPI (non-blocking, with the schedule's tag): in the schedule language a send never waits,
// and an NCCL send waits on its stream until the receiver posts its receive, so a schedule
// in which both ranks of a pair send before they receive would hang (see docs/cuda.md).
#pragma once

#include "backend/ComputeRank.h"
#include "cpu/Comm.h"
#include "cpu/Kernels.h"

#include <memory>
#include <string>

namespace schedc::cuda {

// Why this process cannot run the cuda backend (no usable GPU, more processes on this
// node than GPUs), in one line; empty when it can. Collective over MPI_COMM_WORLD.
std::string deviceProblem();

// The backend for this process's rank, on the GPU its local rank selects.
std::unique_ptr<backend::ComputeRank> makeCudaRank(const backend::ComputeConfig &config, cpu::Comm &comm);

} // namespace schedc::cuda
