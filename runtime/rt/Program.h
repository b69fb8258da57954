// Program — running a compiled schedule (a schedc_program) on a backend: the C++
// side of schedc_main, also called directly by `schedc run` (the JIT), so the executable
// and the JIT share one path. It rebuilds the source files and locations from the program
// description, so diagnostics print exactly as `schedc check` prints them.
#pragma once

#include "backend/Comm.h"
#include "backend/ComputeRank.h"
#include "backend/Tensors.h"
#include "run/Run.h"
#include "schedc/runtime.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace schedc::rt {

// The settings of a run that computes for real: one MPI process per rank, on the cpu
// backend or the cuda backend (one GPU per process).
struct ComputeRun {
  enum Backend { Cpu, Cuda } backend = Cpu;
  backend::ComputeConfig config; // batches come from the schedule
  std::string weightsOut;        // a directory for the final weights (.npy per layer), or empty
  bool overwriteWeights = false; // --overwrite-weights: replace weights a previous run wrote there
  bool noVerify = false;         // run even a schedule check rejects
  bool stats = false;            // print each rank's GEMM rate, communication time and the library's own GEMM rate
  const char *name() const { return backend == Cuda ? "cuda" : "cpu"; }
};

// Whether this program was linked with the cuda backend (`schedc build --cuda`).
bool haveCuda();
// Why the cuda backend cannot run in this process, in one line (empty: it can). Collective.
std::string cudaUnavailable();
// This process's GPU measured into a hardware file's text (runtime/cuda/Calibrate.cpp; only
// where haveCuda()).
std::string calibrateCuda();
// The real backend `run` asks for, for this process's rank.
std::unique_ptr<backend::ComputeRank> makeComputeRank(ComputeRun::Backend backend, const backend::ComputeConfig &config,
                                                      backend::Comm &comm);

// Runs `program` with the -D texts in `defines`; prints the report on `out` and (unless
// options.json) diagnostics on `err`. With `computeRun`, computes for real: MPI must be
// initialized, and only rank 0 prints. Returns the exit code (the same on every rank).
int runProgram(const schedc_program &program, const std::vector<std::string> &defines, const sim::RunOptions &options,
               std::ostream &out, std::ostream &err, const ComputeRun *computeRun = nullptr);

} // namespace schedc::rt
