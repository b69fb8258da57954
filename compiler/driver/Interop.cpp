// Interop implementation: the two subcommands over interop/ and the checker.
#include "driver/Interop.h"

#include "check/Check.h"
#include "driver/FrontEnd.h"
#include "files/AtomicFile.h"
#include "interop/ExportSchedule.h"
#include "interop/ImportSchedule.h"
#include "run/Run.h"

#include <iostream>
#include <sstream>

namespace schedc::driver {

namespace {

// Writes `text` to -o's file, or to stdout without one.
int writeOutput(const Options &opts, const std::string &text) {
  if (opts.output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  if (writeAtomically(opts.output, text))
    return kExitOk;
  std::cerr << "schedc: error: cannot write `" << opts.output << "`\n";
  return kExitIoError;
}

} // namespace

int runImport(const Options &opts, SourceManager &sources, DiagnosticEngine &diags) {
  std::string error;
  std::optional<uint32_t> csv = sources.load(opts.input, error);
  if (!csv) {
    std::cerr << "schedc: error: cannot read `" << opts.input << "`: " << error << "\n";
    return kExitIoError;
  }
  std::optional<uint32_t> imported = interop::addImported(*csv, importOptionsOf(opts), sources, diags);
  if (!imported)
    return kExitSourceError;
  return writeOutput(opts, sources.text(*imported));
}

int runExport(const Options &opts, sim::RunOptions run, const ir::Program &program, const ir::Function &schedule,
              const std::map<std::string, int64_t> &params, SourceManager &sources, DiagnosticEngine &diags) {
  run.keepEvents = run.recordTransfers = true;
  std::optional<std::string> csv;
  std::vector<Diagnostic> problems;
  run.afterRun = [&](const sim::World &world, sim::CheckResult &) {
    if (world.correct())
      csv = interop::exportSchedule(world, opts.comms, problems);
    return std::string();
  };
  std::ostringstream report;
  int code = check::runCheck(program, schedule, params, run, sources, diags, report);
  if (code != kExitOk) { // not a correct step: say why, export nothing
    std::cout << report.str();
    return code;
  }
  for (const Diagnostic &d : problems)
    diags.error(d.range, d.message);
  if (!csv) // the schedule's shape has no PyTorch actions (reported where)
    return kExitSourceError;
  return writeOutput(opts, *csv);
}

} // namespace schedc::driver
