// FuzzPytorchCsv — libFuzzer target for PyTorch schedule files (`schedc import`, and check
// on a .csv): any bytes as a CSV go through the reader and the importer; a schedule the
// importer writes must pass the front end (a schedule it writes that sema refuses is an
// importer bug: the target aborts), and if small enough (at most 8 ranks and 16
// micro-batches) it runs under the checker, where nothing may crash, trip a sanitizer or
// exit 70. Every diagnostic is formatted, through the derived text's mapping to the CSV.
// Inputs of odd length are lowered for FSDP stages (--fsdp), so both importers run. A
// correct step is then exported (with its sends and receives for inputs whose first byte
// is odd) and the file read and imported again: what export writes must import without an
// error (the target aborts if not).
#include "SmallCheck.h"
#include "check/Check.h"
#include "check/Interpreter.h"
#include "diagnostics/Diagnostics.h"
#include "interop/ExportSchedule.h"
#include "interop/ImportSchedule.h"
#include "ir/IR.h"
#include "run/Run.h"
#include "sema/Imports.h"
#include "sema/Sema.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace schedc;

namespace {

// What export wrote must read and import cleanly.
void reimport(const std::string &csv) {
  SourceManager sources;
  DiagnosticEngine diags(sources, nullptr);
  uint32_t file = sources.addBuffer("exported.csv", csv);
  if (interop::addImported(file, interop::ImportOptions{}, sources, diags))
    return;
  for (const Diagnostic &d : diags.diagnostics())
    std::fprintf(stderr, "%s", diags.format(d).c_str());
  std::fprintf(stderr, "export wrote a file the importer refuses:\n%s\n", csv.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SourceManager sources;
  DiagnosticEngine diags(sources, nullptr);
  uint32_t csv = sources.addBuffer("fuzz.csv", std::string(reinterpret_cast<const char *>(data), size));
  std::optional<uint32_t> file = interop::addImported(csv, interop::ImportOptions{size % 2 == 1}, sources, diags);
  for (const Diagnostic &d : diags.diagnostics())
    (void)diags.format(d);
  if (!file)
    return 0;
  bool unreadable = false;
  std::vector<std::unique_ptr<ast::Module>> modules =
      sema::loadModules(*file, sema::ImportOptions{{}, sema::defaultStdlibDir()}, sources, diags, unreadable);
  std::unique_ptr<ir::Program> program = modules.empty() ? nullptr : sema::analyze(modules, sema::SemaOptions{}, diags);
  if (!program || !program->entry || ir::verify(*program) != "") {
    for (const Diagnostic &d : diags.diagnostics())
      std::fprintf(stderr, "%s", diags.format(d).c_str());
    std::fprintf(stderr, "the importer wrote a schedule the front end refuses:\n%s\n", sources.text(*file).c_str());
    std::abort();
  }
  const ir::Function &schedule = program->functions[*program->entry];
  DiagnosticEngine paramDiags(sources, nullptr);
  std::optional<std::map<std::string, int64_t>> params =
      sim::resolveDefines(check::setupOf(*program, schedule, sources), {}, paramDiags);
  std::optional<std::vector<int64_t>> values =
      params ? check::evaluateParameters(schedule, *params, paramDiags) : std::nullopt;
  if (!values)
    return 0;
  for (size_t i = 0; i < schedule.params.size(); ++i)
    if ((schedule.params[i].name == "ranks" && (*values)[i] > 8) ||
        (schedule.params[i].name != "ranks" && (*values)[i] > 16))
      return -1; // too large to run quickly: keep it out of the corpus
  sim::RunOptions options;
  options.keepEvents = options.recordTransfers = true;
  std::optional<std::string> exported;
  std::vector<Diagnostic> problems;
  bool comms = size > 0 && (data[0] & 1);
  options.afterRun = [&](const sim::World &world, sim::CheckResult &) {
    if (world.correct())
      exported = interop::exportSchedule(world, comms, problems);
    return std::string();
  };
  fuzz::runSmallCheck(*program, schedule, *params, options, sources, diags);
  if (exported)
    reimport(*exported);
  return 0;
}
