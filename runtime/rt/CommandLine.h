// CommandLine — a compiled program's command line: its --help text, and its options read into
// the run's options (sim::RunOptions) and a real backend's settings (ComputeRun), checked as
// a whole before anything runs. Internal to runtime/rt/.
#pragma once

#include "rt/Program.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::rt {

struct CommandLine {
  sim::RunOptions options; // the shared options (--threads: the cpu and cuda backends' real runs take one)
  ComputeRun run;
  bool computing = false; // --backend=cpu or cuda
  bool help = false;      // --help: print helpText() and stop
  bool tf32Flag = false;  // --tf32 given: as --precision=tf32, but refused beside --precision=bf16
  std::string calibrate;  // --calibrate=FILE: measure this machine into a hardware file instead of running
};

// Why a command line was refused: the message, and the exit code (kExitUsage; kExitIoError for
// a --weights-out directory that must not be written or a model or hardware file that cannot
// be read; kExitSourceError for such a file that is not a valid description).
struct Refusal {
  std::string message;
  int exitCode = 0;
};

// Reads the arguments after the program's name. nullopt: refused, and `refusal` says why.
std::optional<CommandLine> readCommandLine(const std::vector<std::string> &args, Refusal &refusal);

// The text of `--help`, for the program named `program`.
std::string helpText(const std::string &program);

} // namespace schedc::rt
