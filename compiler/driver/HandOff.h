// HandOff — how `schedc` runs `build` and `run` without linking LLVM: it replaces itself
// (exec) with schedc-llvm from its own folder, with the same arguments, so the user sees one
// program. Everything else `schedc` does itself, and starts without loading LLVM, MPI or BLAS.
#pragma once

#include <string>
#include <vector>

namespace schedc::driver {

// The program `build` and `run` are handed to: schedc-llvm beside this executable.
std::string compilerPath();

// Execs compilerPath() with `args`; returns only when that fails, with kExitIoError after
// saying why.
int handOffToCompiler(const std::vector<std::string> &args);

} // namespace schedc::driver
