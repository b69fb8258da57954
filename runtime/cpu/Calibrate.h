// Calibrate — measures this machine as the cpu backend uses it and describes it as a
// hardware file (cost/Hardware.h) for the hardware cost model: the rate of the backend
// layer's forward and backward GEMMs in OpenBLAS, the rate of their other work (tanh, dz,
// allocation) in elements/s, the memory bandwidth of a STREAM-like triad into a new array,
// the bytes/s of the backend's optimizer step (the optimizer given), the MPI latency of a
// ping-pong between ranks 0 and 1, the bandwidth an all-reduce of a weight implies and the
// shares of it the backend's all-gather and reduce-scatter reach, the ranks on a node and
// the memory each can have; and that communication does not overlap compute (one thread per
// rank). Collective over every MPI rank.
#pragma once

#include "backend/Tensors.h"

#include <string>

namespace schedc::cpu {

// The hardware file's text (TOML), measured now at the sizes of `dims`, with `optimizer`.
std::string calibrate(const backend::Dims &dims, const backend::Optimizer &optimizer);

} // namespace schedc::cpu
