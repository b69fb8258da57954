// Options — the command line of `schedc`: a subcommand (check, draw, build, run, compare,
// import, export, plan),
// its input file(s) and options in the style of clang/LLVM tools. Parsing never exits the process: it
// returns the options or an error message for the driver to report with exit code 2.
#pragma once

#include "run/SharedOptions.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::driver {

enum class Command { Help, Version, Check, Draw, Build, Run, Compare, Import, Export, Plan };
enum class Emit { None, Ast, Ir };
enum class Format { Text, Json, Svg, Html };

// `schedc plan`'s own options (driver/Plan.h).
struct PlanOptions {
  int64_t accelerators = 0;           // --gpus
  int64_t globalBatch = 0;            // --global-batch, in sequences
  int64_t sequence = 0;               // --sequence: the model's sequence length (0: the model's own)
  double memoryCapGiB = 0;            // --memory-cap (0: the accelerator's memory)
  double headroom = -1;               // --headroom, percent of the accelerator's memory left free (-1: none)
  std::vector<std::string> schedules; // --schedules=a,b (empty: every family)
  uint64_t top = 5;                   // --top
  std::string exportFile;             // --export=FILE.csv: the winner as a PyTorch schedule
  bool exhaustive = false;            // --exhaustive: check every configuration (no pruning)
};

// The command line of schedc: the options compiled programs share (sim::SharedOptions, read by
// the same readers), and schedc's own.
struct Options : sim::SharedOptions {
  Command command = Command::Help;
  std::string input;                 // the (first) input file
  std::vector<std::string> inputs;   // every input file (several only for compare)
  std::string output;                // -o
  std::vector<std::string> includes; // -I dir
  std::string schedule;              // --schedule=NAME
  Emit emit = Emit::None;            // --emit=ast|ir
  Format format = Format::Text;      // --format=text|json
  unsigned errorLimit = 20;          // --error-limit=N (0: no limit)
  unsigned optLevel = 2;             // -O0 .. -O3 (build, run)
  bool emitLLVM = false;             // --emit-llvm (build): textual LLVM IR
  bool objectOnly = false;           // -c (build): an object file, not linked
  bool cuda = false;                 // --cuda (build): link the cuda backend in
  bool debugInfo = false;            // -g (build): keep the runtime's debug information
  bool comms = false;                // --comms (export): the sends and receives too
  bool fsdp = false;                 // --fsdp: a .csv's stages are FSDP modules (interop/ImportReading.h)
  bool replicate = false;            // --replicate: they are replicated (DDP-style `replicate`)
  PlanOptions plan;                  // plan's
  // The shared options as typed (sim::readSharedOption's), each whole (`--model=x`): the
  // command lines plan hands back repeat them.
  std::vector<std::string> sharedArguments;
};

// Parses argv. On error returns nullopt and sets `error`.
std::optional<Options> parseOptions(const std::vector<std::string> &args, std::string &error);

// The text of `schedc --help`.
std::string helpText();

} // namespace schedc::driver
