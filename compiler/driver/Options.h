// Options — the command line of `schedc`: a subcommand (check, draw, build, run, compare,
// import, export),
// its input file(s) and options in the style of clang/LLVM tools. Parsing never exits the process: it
// returns the options or an error message for the driver to report with exit code 2.
#pragma once

#include "cost/CostModel.h"
#include "sim/Budget.h"
#include "sim/Bytes.h"
#include "sim/SharedOptions.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::driver {

enum class Command { Help, Version, Check, Draw, Build, Run, Compare, Import, Export };
enum class Emit { None, Ast, Ir };
enum class Format { Text, Json, Svg, Html };

struct Options {
  Command command = Command::Help;
  std::string input;                                      // the (first) input file
  std::vector<std::string> inputs;                        // every input file (several only for compare)
  std::string output;                                     // -o
  std::vector<std::string> defines;                       // -D name=value (checked against the schedule later)
  std::vector<std::string> includes;                      // -I dir
  std::string schedule;                                   // --schedule=NAME
  const cost::CostModel *costModel = &cost::puzzleCost(); // --cost-model=
  // The hardware cost model (--cost-model=hardware, or --model/--hardware): what to read
  // (a preset's name or a TOML file) and the key=value settings over it; made by
  // resolveCostModel (driver/CostModels.h), which owns it here.
  bool hardwareCost = false;
  std::string model, hardware;                              // --model=, --hardware=
  std::vector<std::string> modelSettings, hardwareSettings; // --model-set=K=V, --hardware-set=K=V
  std::shared_ptr<const cost::CostModel> ownedCostModel;
  Emit emit = Emit::None;                    // --emit=ast|ir
  Format format = Format::Text;              // --format=text|json
  unsigned errorLimit = 20;                  // --error-limit=N (0: no limit)
  std::string eventsFile;                    // --events=FILE: every event as CSV (check, run)
  std::string traceFile;                     // --trace=FILE: a Chrome trace (check, draw, run)
  unsigned optLevel = 2;                     // -O0 .. -O3 (build, run)
  bool emitLLVM = false;                     // --emit-llvm (build): textual LLVM IR
  bool objectOnly = false;                   // -c (build): an object file, not linked
  bool cuda = false;                         // --cuda (build): link the cuda backend in
  bool comms = false;                        // --comms (export): the sends and receives too
  bool fsdp = false;                         // --fsdp: a .csv's stages are FSDP modules (interop/ImportReading.h)
  bool replicate = false;                    // --replicate: they are replicated (DDP-style `replicate`)
  sim::Limits limits = sim::defaultLimits(); // --max-steps, --time-limit, --memory-limit
  sim::ByteModel bytes;                      // --hidden, --tokens, --optimizer, --precision: bytes to predict
  sim::SilencedWarnings silenced;            // --no-warn=leftover,unreceived
  double overlapHidden = 0;                  // --overlap=SHARE
  unsigned threads = sim::kAutoThreads;      // --threads=N|auto (default: SCHEDC_THREADS)
  std::optional<sim::PointToPoint> p2p;      // --p2p=ordered|tagged (default: the schedule's @p2p)
};

// Parses argv. On error returns nullopt and sets `error`.
std::optional<Options> parseOptions(const std::vector<std::string> &args, std::string &error);

// The text of `schedc --help`.
std::string helpText();

} // namespace schedc::driver
