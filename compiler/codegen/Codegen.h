// Codegen — `schedc build` and `schedc run`: lowers a schedule to LLVM IR, verifies and
// optimizes it with the new pass manager (-O0..-O3), and either writes textual IR, writes an
// object file, links an executable against the runtime library, or runs it in-process with
// ORC LLJIT. The public face of compiler/codegen/; no LLVM types here.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"
#include "run/Run.h"

#include <string>
#include <vector>

namespace schedc::codegen {

enum class OutputKind { Executable, Object, LLVMText };

struct BuildOptions {
  OutputKind kind = OutputKind::Executable;
  std::string output; // the file to write
  unsigned optLevel = 2;
  bool cuda = false;      // link the cuda backend into the executable
  bool debugInfo = false; // keep the runtime archives' debug information (else the link drops it)
};

// Routes LLVM's fatal errors to schedc's exit codes (4 for output that cannot be written,
// 70 otherwise) instead of LLVM's own "LLVM ERROR" and exit 1. Called once by main.
void installFatalErrorHandler();

// Whether this schedc can link the cuda backend into executables (CUDA and NCCL were found
// when it was built).
bool cudaBackendBuilt();

// Compiles `entry` of `program` and writes the output. Returns the exit code; failures are
// reported on `diags`.
int build(const ir::Program &program, const ir::Function &entry, const SourceManager &sources,
          const BuildOptions &options, DiagnosticEngine &diags);

// Compiles `entry` in memory and runs it with the -D texts and run options, as its
// executable would. Returns the run's exit code.
int runJit(const ir::Program &program, const ir::Function &entry, const SourceManager &sources, unsigned optLevel,
           const std::vector<std::string> &defines, const sim::RunOptions &options, DiagnosticEngine &diags);

} // namespace schedc::codegen
