// FrontEnd implementation: the front-end half of the pipeline as one readable function.
#include "driver/FrontEnd.h"

#include "files/ScheduleFiles.h"
#include "interop/ImportSchedule.h"
#include "interop/ImportTables.h"
#include "sema/Imports.h"
#include "sema/Sema.h"

#include <algorithm>
#include <iostream>

namespace schedc::driver {

int usageError(const std::string &message) {
  std::cerr << "schedc: error: " << message << "\n";
  return kExitUsage;
}

namespace {

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

interop::ImportOptions importOptionsOf(const Options &opts) {
  bool replicas = std::any_of(opts.defines.begin(), opts.defines.end(),
                              [](const std::string &d) { return d.rfind("dp=", 0) == 0; });
  return interop::ImportOptions{opts.fsdp, replicas, opts.replicate};
}

std::optional<LoadedProgram> loadProgram(const std::string &file, const Options &opts, SourceManager &sources,
                                         DiagnosticEngine &diags, int &exitCode) {
  std::string error;
  std::optional<uint32_t> mainFile = sources.load(file, error);
  if (!mainFile) {
    std::cerr << "schedc: error: cannot read `" << file << "`: " << error << "\n";
    exitCode = kExitIoError;
    return std::nullopt;
  }
  return loadProgram(*mainFile, opts, sources, diags, exitCode);
}

std::optional<LoadedProgram> loadProgram(uint32_t mainFile, const Options &opts, SourceManager &sources,
                                         DiagnosticEngine &diags, int &exitCode) {
  const std::string file = sources.name(mainFile);
  interop::ImportedSchedule imported;
  if (isPytorchSchedule(file)) { // a PyTorch schedule: its imported schedule
    interop::ImportOptions importing = importOptionsOf(opts);
    importing.tables = opts.emit != Emit::Ast; // its rows run as tables, not parsed as a line each
    std::optional<uint32_t> importedFile = interop::addImported(mainFile, importing, sources, diags, &imported);
    exitCode = kExitSourceError;
    if (!importedFile)
      return std::nullopt;
    mainFile = *importedFile;
  }
  LoadedProgram loaded;
  loaded.tagMeaning = std::move(imported.tagMeaning);
  loaded.reading = std::move(imported.reading);
  sema::ImportOptions importOptions{opts.includes, sema::defaultStdlibDir()};
  bool unreadable = false;
  loaded.modules = sema::loadModules(mainFile, importOptions, sources, diags, unreadable);
  exitCode = unreadable ? kExitIoError : kExitSourceError;
  if (loaded.modules.empty())
    return std::nullopt;
  if (opts.emit == Emit::Ast) {
    std::cout << ast::dump(*loaded.modules.back(), sources);
    return loaded;
  }
  loaded.program = sema::analyze(loaded.modules, sema::SemaOptions{opts.schedule}, diags);
  if (!loaded.program)
    return std::nullopt;
  if (imported.tables && loaded.program->entry)
    imported.tables->spliceInto(*loaded.program, loaded.program->functions[*loaded.program->entry]);
  if (std::string problem = ir::verify(*loaded.program); !problem.empty()) {
    std::cerr << "schedc: internal error: the IR verifier failed: " << problem << " (please report this bug)\n";
    exitCode = kExitInternal;
    return std::nullopt;
  }
  if (opts.emit == Emit::Ir) {
    std::cout << ir::dump(*loaded.program, sources);
    return loaded;
  }
  loaded.schedule = entrySchedule(*loaded.program, file);
  exitCode = kExitUsage;
  if (!loaded.schedule)
    return std::nullopt;
  exitCode = kExitOk;
  return loaded;
}

} // namespace schedc::driver
