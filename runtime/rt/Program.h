// Program — running a compiled schedule (a schedc_program) on the sim backend: the C++
// side of schedc_main, also called directly by `schedc run` (the JIT), so the executable
// and the JIT share one path. It rebuilds the source files and locations from the program
// description, so diagnostics print exactly as `schedc check` prints them.
#pragma once

#include "cpu/Kernels.h"
#include "schedc/runtime.h"
#include "sim/Run.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace schedc::rt {

// The cpu backend's settings (one MPI process per rank).
struct CpuRun {
  cpu::Dims dims; // hidden size, tokens, seed (batches come from the schedule)
  cpu::Optimizer optimizer;
  std::string weightsOut; // a directory for the final weights (.npy per layer), or empty
  bool noVerify = false;  // run even a schedule check rejects
  bool stats = false;     // print each rank's GEMM rate, MPI time and the BLAS's own sgemm rate
};

// Runs `program` with the -D texts in `defines`; prints the report on `out` and (unless
// options.json) diagnostics on `err`. With `cpuRun`, runs on the cpu backend: MPI must be
// initialized, and only rank 0 prints. Returns the exit code (the same on every rank).
int runProgram(const schedc_program &program, const std::vector<std::string> &defines, const sim::RunOptions &options,
               std::ostream &out, std::ostream &err, const CpuRun *cpuRun = nullptr);

} // namespace schedc::rt
