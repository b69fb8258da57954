// CostChoice — the one resolver of the hardware cost model that --cost-model=hardware, --model
// and --hardware (with their -set keys) ask for, for schedc and compiled programs alike: each
// description is a preset when its name is one, else a TOML file (cost/TransformerFile.h,
// cost/Hardware.h); the settings are KEY=VALUE over it. Files are read by the caller's
// `ReadText`, so that schedc can show a bad key at its line and column in the file.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "run/Run.h"
#include "run/SharedOptions.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace schedc::sim {

// Reads the file at `path`: its text, or nullopt with `error` saying why not.
using ReadText = std::function<std::optional<std::string>(const std::string &path, std::string &error)>;

// Why a description was refused: the message and the exit code (kExitUsage: an unknown
// preset or a bad setting; kExitIoError: a file that cannot be read; kExitSourceError: a file
// that is not a valid description, at `line` and `column` of `file`, 0 for the file as a whole).
struct DescriptionProblem {
  std::string message;
  int exitCode = 0;
  std::string file;
  int line = 0, column = 0;
  // "FILE:LINE:COL: message" (or "FILE: message"; the message alone where no file).
  std::string located() const;
};

// Makes the hardware cost model `options` asks for (hardwareCost), over --model's transformer
// or, without one, the tanh(xW1)W2 layer of --hidden and --tokens, and points
// options.costModel (and, with a transformer, options.bytes.transformer) at it; the report
// then shows the bytes of the model it times (options.bytes.given). False, with
// `problem` set, where a description is refused; true (and nothing done) without one.
bool resolveCostModel(SharedOptions &options, const ReadText &read, DescriptionProblem &problem);

// With the hardware cost model of a transformer, a schedule's `layers` parameter is the
// model's layer count: sets it in `params` (the -D overrides) unless -D set it; reports a -D
// that disagrees. False after reporting.
bool applyModelLayers(const SharedOptions &options, const RunSetup &setup, std::map<std::string, int64_t> &params,
                      DiagnosticEngine &diags);

} // namespace schedc::sim
