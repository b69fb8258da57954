// HandOff — how `schedc` runs `build` and `run` without linking LLVM: it replaces itself
// (exec) with schedc-llvm from its own folder, with the same arguments, so the user sees one
// program. Everything else `schedc` does itself, and starts without loading LLVM, MPI or BLAS.
#pragma once

#include <string>
#include <vector>

namespace schedc::driver {

// Execs schedc-llvm from this executable's folder with `args`; returns only when that fails, with kExitIoError after
// saying why.
int handOffToCompiler(const std::vector<std::string> &args);

} // namespace schedc::driver
