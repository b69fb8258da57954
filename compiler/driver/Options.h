// Options — the command line of `schedc`: a subcommand (check, draw, build, run, compare,
// import, export),
// its input file(s) and options in the style of clang/LLVM tools. Parsing never exits the process: it
// returns the options or an error message for the driver to report with exit code 2.
#pragma once

#include "run/SharedOptions.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::driver {

enum class Command { Help, Version, Check, Draw, Build, Run, Compare, Import, Export };
enum class Emit { None, Ast, Ir };
enum class Format { Text, Json, Svg, Html };

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
  bool comms = false;                // --comms (export): the sends and receives too
  bool fsdp = false;                 // --fsdp: a .csv's stages are FSDP modules (interop/ImportReading.h)
  bool replicate = false;            // --replicate: they are replicated (DDP-style `replicate`)
};

// Parses argv. On error returns nullopt and sets `error`.
std::optional<Options> parseOptions(const std::vector<std::string> &args, std::string &error);

// The text of `schedc --help`.
std::string helpText();

} // namespace schedc::driver
