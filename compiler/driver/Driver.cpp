// Driver implementation: the pipeline as one readable function, plus the subcommands.
#include "driver/Driver.h"

#include "ast/AST.h"
#include "check/Check.h"
#include "codegen/Codegen.h"
#include "diagnostics/Diagnostics.h"
#include "driver/Options.h"
#include "ir/IR.h"
#include "sema/Imports.h"
#include "sema/Sema.h"
#include "sim/Run.h"

#include <filesystem>
#include <iostream>
#include <limits>

namespace schedc::driver {

namespace {

int usageError(const std::string &message) {
  std::cerr << "schedc: error: " << message << "\n";
  return kExitUsage;
}

// Picks the schedule to run, reporting why when there is none.
const ir::Function *entrySchedule(const ir::Program &p, const std::string &file) {
  if (p.entry)
    return &p.functions[*p.entry];
  std::string names;
  for (const ir::Function &f : p.functions)
    if (f.isSchedule)
      names += (names.empty() ? "`" : ", `") + f.name + "`";
  if (names.empty())
    usageError("`" + file + "` defines no schedule");
  else
    usageError("`" + file + "` defines several schedules (" + names + "); choose one with --schedule=NAME");
  return nullptr;
}

} // namespace

int runDriver(const std::vector<std::string> &args) {
  std::string error;
  std::optional<Options> parsed = parseOptions(args, error);
  if (!parsed)
    return usageError(error);
  const Options &opts = *parsed;
  if (opts.command == Command::Help) {
    std::cout << helpText();
    return kExitOk;
  }
  if (opts.command == Command::Version) {
    std::cout << "schedc 0.1.0\n";
    return kExitOk;
  }

  // With --format=json every diagnostic goes into the JSON document on stdout instead.
  bool json = opts.format == Format::Json;
  SourceManager sources;
  DiagnosticEngine diags(sources, json ? nullptr : &std::cerr);
  diags.setErrorLimit(opts.errorLimit ? opts.errorLimit : std::numeric_limits<unsigned>::max());

  auto failed = [&](int code, const std::string &schedule = "") {
    if (json)
      std::cout << sim::invalidJson(schedule, opts.input, diags, sources);
    return code;
  };

  std::optional<uint32_t> mainFile = sources.load(opts.input, error);
  if (!mainFile) {
    std::cerr << "schedc: error: cannot read `" << opts.input << "`: " << error << "\n";
    return kExitIoError;
  }

  // Front end: parse the file and its imports, then check and lower to the typed IR.
  sema::ImportOptions importOptions{opts.includes, sema::defaultStdlibDir()};
  std::vector<std::unique_ptr<ast::Module>> modules = sema::loadModules(*mainFile, importOptions, sources, diags);
  if (modules.empty())
    return failed(kExitSourceError);
  if (opts.emit == Emit::Ast) {
    std::cout << ast::dump(*modules.back(), sources);
    return kExitOk;
  }
  std::unique_ptr<ir::Program> program = sema::analyze(modules, sema::SemaOptions{opts.schedule}, diags);
  if (!program)
    return failed(kExitSourceError);
  if (std::string problem = ir::verify(*program); !problem.empty()) {
    std::cerr << "schedc: internal error: the IR verifier failed: " << problem << " (please report this bug)\n";
    return kExitInternal;
  }
  if (opts.emit == Emit::Ir) {
    std::cout << ir::dump(*program, sources);
    return kExitOk;
  }

  const ir::Function *schedule = entrySchedule(*program, opts.input);
  if (!schedule)
    return kExitUsage;
  sim::RunOptions runOptions;
  runOptions.json = json;
  runOptions.maxSteps = opts.maxSteps;
  runOptions.eventsFile = opts.eventsFile;
  runOptions.traceFile = opts.traceFile;
  runOptions.freeCommunication = opts.costModel == "compute-only";
  switch (opts.command) {
  case Command::Draw: {
    runOptions.timelineFile = opts.output;
    runOptions.timelineHtml =
        opts.format == Format::Html || (opts.format != Format::Svg && opts.output.size() > 5 &&
                                        opts.output.compare(opts.output.size() - 5, 5, ".html") == 0);
    if (runOptions.timelineFile.empty())
      runOptions.timelineFile =
          std::filesystem::path(opts.input).stem().string() + (runOptions.timelineHtml ? ".html" : ".svg");
    runOptions.json = false;
    [[fallthrough]];
  }
  case Command::Check: {
    sim::RunSetup setup = check::setupOf(*program, *schedule, sources);
    std::optional<std::map<std::string, int64_t>> params = sim::resolveDefines(setup, opts.defines, diags);
    if (!params)
      return failed(kExitUsage, schedule->name);
    return check::runCheck(*program, *schedule, *params, runOptions, sources, diags, std::cout);
  }
  case Command::Run: // -D is read by the compiled program, as an executable reads it
    return codegen::runJit(*program, *schedule, sources, opts.optLevel, opts.defines, runOptions, diags);
  case Command::Build: {
    if (!opts.defines.empty())
      return usageError("parameters are set when the program runs: pass -D to the executable it builds");
    codegen::BuildOptions build;
    build.optLevel = opts.optLevel;
    build.kind = opts.emitLLVM     ? codegen::OutputKind::LLVMText
                 : opts.objectOnly ? codegen::OutputKind::Object
                                   : codegen::OutputKind::Executable;
    build.output = opts.output;
    if (build.output.empty()) {
      std::string stem = std::filesystem::path(opts.input).stem().string();
      build.output = stem + (opts.emitLLVM ? ".ll" : opts.objectOnly ? ".o" : "");
    }
    return codegen::build(*program, *schedule, sources, build, diags);
  }
  default: return kExitOk;
  }
}

} // namespace schedc::driver
