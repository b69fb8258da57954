// FuzzCheck — libFuzzer target for `schedc check`: a schedule (seeded from examples/ and
// stdlib/, mutated with the language's dictionary) that the front end accepts runs on the
// sim backend under the checker — every operation's checks, collective matching, deadlock
// detection, the end-of-run checks and the report (text or JSON, chosen by the input's last
// byte; the compute-only cost model and the byte model likewise; and whether it runs on one
// thread only, or on one and on 2 to 5, whose reports must be the same byte for byte). Runs are kept small (at
// most 8 ranks, 16 layers and micro-batches, 20 000 statements, 5 s); larger parameters
// are skipped, not run. Nothing may crash or trip a sanitizer, and an exit code the docs
// reserve for compiler bugs (70) aborts the target.
#include "SmallCheck.h"
#include "check/Check.h"
#include "check/Interpreter.h"
#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"
#include "run/Run.h"
#include "sema/Imports.h"
#include "sema/Sema.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace schedc;

namespace {

// Whether the evaluated parameters keep the run small enough to fuzz quickly.
bool smallEnough(const ir::Function &schedule, const std::vector<int64_t> &values) {
  for (size_t i = 0; i < schedule.params.size(); ++i) {
    const std::string &name = schedule.params[i].name;
    int64_t limit = name == "ranks" ? 8 : (name == "layers" || name == "batches") ? 16 : INT64_MAX;
    if (values[i] > limit)
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  uint8_t flags = data[size - 1];
  SourceManager sources;
  DiagnosticEngine diags(sources, nullptr);
  uint32_t file = sources.addBuffer("fuzz.sched", std::string(reinterpret_cast<const char *>(data), size - 1));
  bool unreadable = false;
  std::vector<std::unique_ptr<ast::Module>> modules =
      sema::loadModules(file, sema::ImportOptions{{}, sema::defaultStdlibDir()}, sources, diags, unreadable);
  if (modules.empty())
    return 0;
  std::unique_ptr<ir::Program> program = sema::analyze(modules, sema::SemaOptions{}, diags);
  if (!program || !program->entry)
    return -1; // not a runnable schedule: keep it out of the corpus
  const ir::Function &schedule = program->functions[*program->entry];
  // As the driver does: every parameter needs a default here (no -D), then the values.
  DiagnosticEngine paramDiags(sources, nullptr);
  std::optional<std::map<std::string, int64_t>> params =
      sim::resolveDefines(check::setupOf(*program, schedule, sources), {}, paramDiags);
  if (!params)
    return -1;
  std::optional<std::vector<int64_t>> values = check::evaluateParameters(schedule, *params, paramDiags);
  if (values && !smallEnough(schedule, *values))
    return -1;

  sim::RunOptions options;
  options.json = flags & 1;
  options.costModel = flags & 2 ? cost::findCostModel("compute-only") : &cost::puzzleCost();
  options.bytes.given = flags & 4;
  options.bytes.precision = flags & 8 ? sim::Precision::Bf16 : sim::Precision::Fp32;
  if (flags & 16) // on one thread and on 2 to 5 (lanes of the ranks), which must say the same
    fuzz::compareThreads(*program, schedule, *params, options, sources, 2 + ((flags >> 5) & 3));
  else
    fuzz::runSmallCheck(*program, schedule, *params, options, sources, diags);
  return 0;
}
