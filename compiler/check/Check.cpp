// Check implementation.
#include "check/Check.h"

#include "check/Interpreter.h"
#include "sim/ReportFormat.h"

#include <cstdio>
#include <fstream>
#include <ostream>

namespace schedc::check {

namespace {

std::optional<sim::Kind> kindOf(ir::Type t) {
  switch (t) {
  case ir::Type::Weight: return sim::Kind::Weight;
  case ir::Type::OptState: return sim::Kind::OptState;
  case ir::Type::Activation: return sim::Kind::Activation;
  case ir::Type::ActGrad: return sim::Kind::ActGrad;
  case ir::Type::WeightGrad: return sim::Kind::WeightGrad;
  default: return std::nullopt;
  }
}

// The events as CSV, in the format of the reference traces (test/reference/traces/).
bool writeEvents(const sim::World &world, const std::string &path, DiagnosticEngine &diags) {
  std::ofstream out(path + ".tmp");
  out << "rank,idx,typ,layer,batches,time,length,memory\n";
  for (int64_t r = 0; r < world.model().ranks; ++r) {
    const std::vector<sim::Event> &events = world.events(r);
    for (size_t i = 0; i < events.size(); ++i) {
      const sim::Event &e = events[i];
      out << r << ',' << i << ',' << e.kind << ',';
      if (e.layer >= 0)
        out << e.layer;
      out << ',';
      if (e.batches)
        for (size_t k = 0; k < e.batches->size(); ++k)
          out << (k ? " " : "") << e.batches->elements()[k];
      out << ',' << e.start.str() << ',' << e.length.str() << ',' << e.memory.str() << '\n';
    }
  }
  out.close();
  if (!out || std::rename((path + ".tmp").c_str(), path.c_str()) != 0) {
    diags.error({}, "cannot write the events to `" + path + "`");
    return false;
  }
  return true;
}

} // namespace

int runCheck(const ir::Program &program, const ir::Function &schedule, const std::map<std::string, int64_t> &overrides,
             const CheckOptions &options, const SourceManager &sources, DiagnosticEngine &diags, std::ostream &out) {
  sim::CheckResult result;
  result.schedule = schedule.name;
  result.file = sources.name(schedule.range.begin.file);
  result.targetSteps = schedule.targets.steps;
  result.targetMemory = schedule.targets.memory;

  auto finish = [&](int code) {
    if (options.json)
      out << sim::formatJson(result, diags.diagnostics(), sources);
    else if (result.verdict != sim::Verdict::Invalid)
      out << sim::formatText(result);
    return code;
  };

  result.verdict = sim::Verdict::Invalid;
  std::optional<std::vector<int64_t>> params = evaluateParameters(schedule, overrides, diags);
  std::optional<sim::Model> model = params ? modelOf(schedule, *params, diags) : std::nullopt;
  if (!model)
    return finish(kExitUsage);
  result.model = *model;
  for (size_t i = 0; i < schedule.params.size(); ++i)
    result.parameters.emplace_back(schedule.params[i].name, (*params)[i]);

  std::vector<sim::ArrayInfo> arrays;
  for (const ir::Array &a : program.arrays)
    arrays.push_back(sim::ArrayInfo{a.name, kindOf(a.kind)});
  sim::Options simOptions;
  simOptions.maxSteps = options.maxSteps;
  simOptions.scheduleAt = SourceRange(schedule.range.begin);
  sim::World world(*model, std::move(arrays), simOptions);
  world.run([&](sim::Rank &rank) { runRank(program, schedule, *params, world, rank); });

  for (const Diagnostic &d : world.diagnostics()) {
    auto b = d.severity == Severity::Error ? diags.error(d.range, d.message) : diags.warning(d.range, d.message);
    for (const Diagnostic &n : d.notes)
      b.note(n.range, n.message);
  }
  if (!options.eventsFile.empty() && !writeEvents(world, options.eventsFile, diags))
    return finish(kExitIoError);
  result.verdict = sim::verdictOf(world);
  if (world.completed())
    result.report = world.report();
  return finish(result.verdict == sim::Verdict::Correct ? kExitOk : kExitCheckFailed);
}

} // namespace schedc::check
