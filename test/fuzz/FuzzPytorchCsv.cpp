// FuzzPytorchCsv — libFuzzer target for PyTorch schedule files (`schedc import`, and check
// on a .csv): any bytes as a CSV go through the reader and the importer; a schedule the
// importer writes must pass the front end (a schedule it writes that sema refuses is an
// importer bug: the target aborts), and if small enough (at most 8 ranks and 16
// micro-batches) it runs under the checker, where nothing may crash, trip a sanitizer or
// exit 70. Every diagnostic is formatted, through the derived text's mapping to the CSV.
// Inputs of odd length are lowered for FSDP stages (--fsdp), so both importers run.
#include "SmallCheck.h"
#include "check/Check.h"
#include "check/Interpreter.h"
#include "diagnostics/Diagnostics.h"
#include "interop/ImportSchedule.h"
#include "ir/IR.h"
#include "sema/Imports.h"
#include "sema/Sema.h"
#include "sim/Run.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace schedc;

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
  fuzz::runSmallCheck(*program, schedule, *params, sim::RunOptions{}, sources, diags);
  return 0;
}
