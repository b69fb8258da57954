// Driver — runs one `schedc` invocation: parses the command line, loads the input and its
// imports, runs the front end (parse -> AST -> sema -> typed IR, verified), stops early for
// `--emit=ast|ir`, and dispatches to the subcommand. Returns the process exit code
// (see ExitCode in diagnostics/Diagnostics.h); it never calls exit() itself.
//
// Two programs run it. `schedc` checks, draws and compares without loading LLVM, MPI or BLAS
// (it starts in milliseconds); it hands `build` and `run` to `schedc-llvm` beside it, the same
// driver with a Compiler (driver/Compile.h), which does everything.
#pragma once

#include <string>
#include <vector>

namespace schedc {
class SourceManager;
class DiagnosticEngine;
namespace ir {
struct Program;
struct Function;
} // namespace ir
namespace sim {
struct RunOptions;
} // namespace sim
} // namespace schedc

namespace schedc::driver {

struct Options;

// What `build` and `run` need that the rest does not: LLVM (and, to run, MPI and BLAS).
struct Compiler {
  int (*build)(const Options &opts, const ir::Program &program, const ir::Function &schedule,
               const SourceManager &sources, DiagnosticEngine &diags);
  int (*run)(const Options &opts, const ir::Program &program, const ir::Function &schedule,
             const SourceManager &sources, const sim::RunOptions &runOptions, DiagnosticEngine &diags);
};

// Without a compiler, `build` and `run` are handed to schedc-llvm (driver/HandOff.h).
int runDriver(const std::vector<std::string> &args, const Compiler *compiler);

// The whole of a driver program's main: runs the driver on a 512 MiB stack (a fiber's),
// so that deeply nested (but within-limit) input cannot overflow it, and turns anything that
// escapes the driver (only a compiler bug can) into an internal error with exit code 70.
int driverMain(int argc, char **argv, const Compiler *compiler);

} // namespace schedc::driver
