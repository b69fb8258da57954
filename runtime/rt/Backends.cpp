// Backends — the real backends of this program: always cpu; cuda when the executable was
// linked with the cuda backend (`schedc build --cuda`). The cuda backend's entry points are
// declared weak here, so a program linked without it (most: CUDA's libraries add memory and
// start-up time to every run: docs/performance.md) still links, and asks here whether they are
// present.
#include "cpu/CpuRank.h"
#include "rt/Program.h"

namespace schedc::cuda {
// Defined by runtime/cuda/CudaRank.cpp; null where it is not linked.
[[gnu::weak]] std::string deviceProblem();
[[gnu::weak]] std::unique_ptr<backend::ComputeRank> makeCudaRank(const backend::ComputeConfig &config,
                                                                 backend::Comm &comm);
[[gnu::weak]] std::string calibrateDevice(); // runtime/cuda/Calibrate.cpp
} // namespace schedc::cuda

namespace schedc::rt {

bool haveCuda() {
  return cuda::deviceProblem != nullptr && cuda::makeCudaRank != nullptr;
}

std::string calibrateCuda() {
  return cuda::calibrateDevice();
}

// Only asked for when the command line chose cuda, which it allows only when haveCuda().
std::string cudaUnavailable() {
  return cuda::deviceProblem();
}

std::unique_ptr<backend::ComputeRank> makeComputeRank(ComputeRun::Backend backend, const backend::ComputeConfig &config,
                                                      backend::Comm &comm) {
  if (backend == ComputeRun::Cuda)
    return cuda::makeCudaRank(config, comm);
  return std::make_unique<cpu::CpuRank>(config, comm);
}

} // namespace schedc::rt
