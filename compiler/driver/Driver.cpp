// Driver implementation: the pipeline as one readable function, plus the subcommands.
#include "driver/Driver.h"

#include "ast/AST.h"
#include "check/Check.h"
#include "diagnostics/Diagnostics.h"
#include "driver/Compare.h"
#include "driver/CostModels.h"
#include "driver/FrontEnd.h"
#include "driver/HandOff.h"
#include "driver/Interop.h"
#include "driver/Options.h"
#include "driver/Plan.h"
#include "install/Installation.h"
#include "ir/IR.h"
#include "run/CostChoice.h"
#include "sema/Imports.h"

#include "RuntimeArchives.h"
#include "run/Run.h"

#include <filesystem>
#include <iostream>
#include <limits>

namespace schedc::driver {

namespace {

// What check, draw and run pass to the run: the shared options, its report and outputs.
sim::RunOptions runOptionsOf(const Options &opts) {
  sim::RunOptions runOptions;
  static_cast<sim::SharedOptions &>(runOptions) = opts; // the options compiled programs share, whole
  runOptions.json = opts.format == Format::Json;
  if (opts.command != Command::Draw)
    return runOptions;
  runOptions.timelineFile = opts.output;
  runOptions.timelineHtml =
      opts.format == Format::Html || (opts.format != Format::Svg && opts.output.size() > 5 &&
                                      opts.output.compare(opts.output.size() - 5, 5, ".html") == 0);
  if (runOptions.timelineFile.empty())
    runOptions.timelineFile =
        std::filesystem::path(opts.input).stem().string() + (runOptions.timelineHtml ? ".html" : ".svg");
  runOptions.json = false;
  return runOptions;
}

} // namespace

int runDriver(const std::vector<std::string> &args, const Compiler *compiler) {
  std::string error;
  std::optional<Options> parsed = parseOptions(args, error);
  if (!parsed)
    return usageError(error);
  Options &opts = *parsed;
  if (opts.command == Command::Help) {
    std::cout << helpText();
    return kExitOk;
  }
  if (opts.command == Command::Version) { // and where its own files are (an install's, or the build tree's)
    std::cout << "schedc 0.1.0\nstdlib: " << sema::defaultStdlibDir()
              << "\nruntime: " << install::runtimeDir(SCHEDC_RUNTIME_BUILD_DIR) << "\n";
    return kExitOk;
  }
  bool compiles = opts.command == Command::Build || opts.command == Command::Run;
  if (compiles && !compiler)
    return handOffToCompiler(args);

  // With --format=json every diagnostic goes into the JSON document on stdout instead.
  // (plan's JSON is its result alone: its errors, as its progress, go to stderr)
  bool json = opts.format == Format::Json && opts.command != Command::Plan;
  SourceManager sources;
  DiagnosticEngine diags(sources, json ? nullptr : &std::cerr);
  diags.setErrorLimit(opts.errorLimit ? opts.errorLimit : std::numeric_limits<unsigned>::max());

  auto failed = [&](int code, const std::string &schedule = "") {
    if (json)
      std::cout << sim::invalidJson(schedule, opts.input, diags, sources);
    return code;
  };

  if (int code = resolveCostModel(opts, sources, diags); code != kExitOk)
    return failed(code);
  if (opts.command == Command::Compare)
    return runCompare(opts, sources, diags);
  if (opts.command == Command::Import)
    return runImport(opts, sources, diags);
  if (opts.command == Command::Plan)
    return runPlan(opts, sources, diags);
  int exitCode = kExitOk;
  std::optional<LoadedProgram> loaded = loadProgram(opts.input, opts, sources, diags, exitCode);
  if (!loaded)
    return diags.hasErrors() ? failed(exitCode) : exitCode; // errors with a location go in the JSON too
  if (!loaded->schedule)
    return kExitOk; // --emit=ast|ir printed the dump
  const ir::Program &program = *loaded->program;
  const ir::Function &schedule = *loaded->schedule;
  sim::RunOptions runOptions = runOptionsOf(opts);
  runOptions.tagMeaning = loaded->tagMeaning;
  runOptions.reading = loaded->reading;
  runOptions.lastRun = true; // check, draw and run run the schedule once, then the process exits
  switch (opts.command) {
  case Command::Draw:
  case Command::Check:
  case Command::Export: {
    sim::RunSetup setup = check::setupOf(program, schedule, sources);
    std::optional<std::map<std::string, int64_t>> params = sim::resolveDefines(setup, opts.defines, diags);
    if (!params || !sim::applyModelLayers(opts, setup, *params, diags))
      return failed(kExitUsage, schedule.name);
    if (opts.command == Command::Export)
      return runExport(opts, runOptions, program, schedule, *params, sources, diags);
    return check::runCheck(program, schedule, *params, runOptions, sources, diags, std::cout);
  }
  case Command::Run: // -D is read by the compiled program, as an executable reads it
    return compiler->run(opts, program, schedule, sources, runOptions, diags);
  case Command::Build: return compiler->build(opts, program, schedule, sources, diags);
  default: return kExitOk;
  }
}

} // namespace schedc::driver
