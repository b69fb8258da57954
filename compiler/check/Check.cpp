// Check implementation.
#include "check/Check.h"

#include "check/Interpreter.h"
#include "check/StackSize.h"

namespace schedc::check {

sim::RunSetup setupOf(const ir::Program &program, const ir::Function &schedule, const SourceManager &sources) {
  sim::RunSetup setup;
  setup.schedule = schedule.name;
  setup.file = sources.name(sources.shown(schedule.range).begin.file); // an imported CSV: its name
  for (const ir::Param &p : schedule.params)
    setup.params.push_back(sim::ParamSpec{p.name, p.defaultValue.has_value(), p.range});
  for (const ir::Array &a : program.arrays)
    setup.arrays.push_back(sim::ArrayInfo{a.name, ir::valueKind(a.kind)});
  setup.targetSteps = schedule.targets.steps;
  setup.targetMemory = schedule.targets.memory;
  setup.scheduleAt = SourceRange(schedule.range.begin);
  setup.stackBytes = stackBytesFor(program, schedule);
  setup.p2p = schedule.orderedPointToPoint ? sim::PointToPoint::Ordered : sim::PointToPoint::Tagged;
  return setup;
}

int runCheck(const ir::Program &program, const ir::Function &schedule, const std::map<std::string, int64_t> &overrides,
             const sim::RunOptions &options, const SourceManager &sources, DiagnosticEngine &diags, std::ostream &out) {
  std::optional<std::vector<int64_t>> values = evaluateParameters(schedule, overrides, diags);
  return sim::runAndReport(
      setupOf(program, schedule, sources), values, options,
      [&](sim::Rank &rank) { runRank(program, schedule, *values, rank); }, sources, diags, out);
}

} // namespace schedc::check
