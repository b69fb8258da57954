// FrontEnd — loads one input file with its imports and runs the front end (parse -> AST ->
// sema -> typed IR, verified), choosing the schedule to run. Shared by every subcommand of
// the driver, including `compare`, which loads several files into one SourceManager.
#pragma once

#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"
#include "interop/ImportSchedule.h"
#include "ir/IR.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::driver {

struct LoadedProgram {
  std::vector<std::unique_ptr<ast::Module>> modules;
  std::unique_ptr<ir::Program> program;
  const ir::Function *schedule = nullptr; // null when stopped after --emit
  sim::TagMeaning tagMeaning;             // an imported PyTorch file's (sim::Options::tagMeaning)
  std::string reading;                    // and how its stages were read (sim::RunOptions::reading)
};

// How to read a PyTorch file's stages: replicated with --replicate, FSDP with --fsdp or
// -D dp=N, else plain modules (interop/ImportReading.h).
interop::ImportOptions importOptionsOf(const Options &opts);

// Loads `file`. On failure reports the problem and returns nullopt with `exitCode` set;
// with --emit=ast|ir prints the dump and returns a program without a schedule.
std::optional<LoadedProgram> loadProgram(const std::string &file, const Options &opts, SourceManager &sources,
                                         DiagnosticEngine &diags, int &exitCode);
// The same for a file already in `sources` (a buffer: `schedc plan`'s searched orders).
std::optional<LoadedProgram> loadProgram(uint32_t file, const Options &opts, SourceManager &sources,
                                         DiagnosticEngine &diags, int &exitCode);

// Reports a usage error on stderr and returns the usage exit code.
int usageError(const std::string &message);

} // namespace schedc::driver
