// CudaRank — the cuda backend's ComputeRank: the model of the cpu backend (same data, same
// arithmetic, same shards) on the GPU of this MPI process. GEMMs are cuBLAS's (fp32, TF32
// tensor cores with --tf32, or bf16 with fp32 masters), the element-wise steps are
// cuda/Kernels, collectives go through NCCL (cuda/Nccl) on a stream of their own that
// overlaps compute, point-to-point messages through NCCL over a channel per route
// (cuda/PointToPoint), every byte through cuda/DeviceMemory, and cuda/StreamOrder orders
// the streams (see docs/cuda.md).
#pragma once

#include "backend/Comm.h"
#include "backend/ComputeRank.h"
#include "backend/Tensors.h"

#include <memory>
#include <string>

namespace schedc::cuda {

// Why this process cannot run the cuda backend (no usable GPU, more processes on this
// node than GPUs), in one line; empty when it can. Collective over MPI_COMM_WORLD.
std::string deviceProblem();

// The backend for this process's rank, on the GPU its local rank selects.
std::unique_ptr<backend::ComputeRank> makeCudaRank(const backend::ComputeConfig &config, backend::Comm &comm);

} // namespace schedc::cuda
