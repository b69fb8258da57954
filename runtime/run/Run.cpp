// Run implementation: -D overrides, model size, the run itself, events CSV, report.
#include "run/Run.h"

#include "diagnostics/Suggest.h"
#include "files/AtomicFile.h"
#include "options/Define.h"
#include "report/ReportFormat.h"
#include "report/Timeline.h"
#include "report/Trace.h"
#include "run/Watchdog.h"

#include <optional>
#include <ostream>

namespace schedc::sim {

bool hasParameter(const RunSetup &setup, const std::string &name) {
  for (const ParamSpec &p : setup.params)
    if (p.name == name)
      return true;
  return false;
}

std::optional<std::map<std::string, int64_t>>
resolveDefines(const RunSetup &setup, const std::vector<std::string> &defines, DiagnosticEngine &diags) {
  std::map<std::string, int64_t> out;
  std::vector<std::string_view> names;
  std::string list;
  for (const ParamSpec &p : setup.params) {
    names.push_back(p.name);
    list += (list.empty() ? "" : ", ") + p.name;
  }
  bool ok = true;
  for (const std::string &d : defines) {
    std::string error;
    auto parsed = parseDefine(d, error);
    if (!parsed) {
      diags.error({}, error);
      ok = false;
      continue;
    }
    auto &[name, value] = *parsed;
    if (!hasParameter(setup, name)) {
      diags.error({}, "schedule `" + setup.schedule + "` has no parameter `" + name + "`" + didYouMean(name, names) +
                          " (its parameters: " + list + ")");
      ok = false;
    } else if (!out.emplace(name, value).second) {
      diags.error({}, "parameter `" + name + "` is set twice with -D");
      ok = false;
    }
  }
  for (const ParamSpec &p : setup.params)
    if (!p.hasDefault && !out.count(p.name)) {
      diags.error(p.range, "parameter `" + p.name + "` has no default; set it with `-D " + p.name + "=N`");
      ok = false;
    }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

namespace {

// The model size from the parameters (`ranks` is 1 if the schedule has none).
std::optional<Model> modelOf(const RunSetup &setup, const std::vector<int64_t> &values, DiagnosticEngine &diags) {
  Model m;
  bool ok = true;
  for (size_t i = 0; i < setup.params.size(); ++i) {
    const ParamSpec &p = setup.params[i];
    int64_t *slot = p.name == "layers"    ? &m.layers
                    : p.name == "batches" ? &m.batches
                    : p.name == "ranks"   ? &m.ranks
                                          : nullptr;
    if (!slot)
      continue;
    *slot = values[i];
    int64_t limit = p.name == "ranks" ? kMaxRanks : kMaxModelSize;
    if (values[i] < 1 || values[i] > limit) {
      diags.error(p.range, "`" + p.name + "` is " + std::to_string(values[i]) + "; it must be from 1 to " +
                               std::to_string(limit));
      ok = false;
    }
  }
  return ok ? std::optional(m) : std::nullopt;
}

// The events as CSV, in the format of the reference traces (test/reference/traces/).
void writeEventsCsv(std::ostream &out, const World &world) {
  out << "rank,idx,typ,layer,batches,time,length,memory\n";
  for (int64_t r = 0; r < world.model().ranks; ++r) {
    const EventLog &events = world.events(r);
    for (size_t i = 0; i < events.size(); ++i) {
      const Event &e = events[i];
      out << r << ',' << i << ',' << eventName(e.kind) << ',';
      if (e.layer >= 0)
        out << e.layer;
      out << ',';
      if (e.batches)
        for (size_t k = 0; k < e.batches->size(); ++k)
          out << (k ? " " : "") << e.batches->elements()[k];
      out << ',' << e.start.str() << ',' << e.length.str() << ',' << e.memory.str() << '\n';
    }
  }
}

} // namespace

std::string invalidJson(const std::string &schedule, const std::string &file, const DiagnosticEngine &diags,
                        const SourceManager &sources) {
  CheckResult result;
  result.schedule = schedule;
  result.file = file;
  result.verdict = Verdict::Invalid;
  return formatJson(result, diags.diagnostics(), sources);
}

namespace {

// Keeps `world` until the process exits (still reachable: a leak checker does not report it).
void leaveToExit(std::unique_ptr<World> world) {
  static auto *kept = new std::vector<World *>; // never destroyed, so still reachable at the leak check
  kept->push_back(world.release());
}

// What the World is made with: the command line's settings, whole, and the run's own.
Options worldOptions(const RunSetup &setup, const RunOptions &options) {
  Options simOptions;
  static_cast<RunSettings &>(simOptions) = options;
  if (simOptions.limits.started == std::chrono::steady_clock::time_point{})
    simOptions.limits.started = std::chrono::steady_clock::now();
  simOptions.scheduleAt = setup.scheduleAt;
  simOptions.keepEvents =
      options.keepEvents || !options.eventsFile.empty() || !options.traceFile.empty() || !options.timelineFile.empty();
  simOptions.recordTransfers = options.recordTransfers;
  simOptions.tagMeaning = options.tagMeaning;
  simOptions.stackBytes = setup.stackBytes;
  simOptions.stopRanksAtRepeatedErrors = options.stopRanksAtRepeatedErrors;
  simOptions.p2p = options.p2p.value_or(setup.p2p);
  return simOptions;
}

// Runs `body` on every rank; a run on several threads that diverged is made again on one,
// which reports what the threads met in its order.
std::unique_ptr<World> runWorld(const Model &model, const RunSetup &setup, Options simOptions,
                                const std::function<void(Rank &)> &body) {
  auto world = std::make_unique<World>(model, setup.arrays, simOptions);
  world->run(body);
  if (world->diverged()) {
    world.reset();
    renewOutOfMemoryReserve();
    simOptions.threads = 1;
    world = std::make_unique<World>(model, setup.arrays, simOptions);
    world->run(body);
  }
  return world;
}

} // namespace

int runAndReport(const RunSetup &setup, const std::optional<std::vector<int64_t>> &values, const RunOptions &options,
                 const std::function<void(Rank &)> &body, const SourceManager &sources, DiagnosticEngine &diags,
                 std::ostream &out) {
  CheckResult result;
  result.bytes = options.bytes;
  result.hardware = dynamic_cast<const cost::HardwareCost *>(options.costModel);
  result.schedule = setup.schedule;
  result.file = setup.file;
  result.reading = options.reading;
  result.targetSteps = setup.targetSteps;
  result.targetMemory = setup.targetMemory;
  result.verdict = Verdict::Invalid;
  auto finish = [&](int code) {
    if (options.json)
      out << formatJson(result, diags.diagnostics(), sources);
    else if (result.verdict != Verdict::Invalid)
      out << formatText(result);
    out.flush();
    return code;
  };

  std::optional<Model> model = values ? modelOf(setup, *values, diags) : std::nullopt;
  if (!model)
    return finish(kExitUsage);
  result.model = *model;
  for (size_t i = 0; i < setup.params.size(); ++i)
    result.parameters.emplace_back(setup.params[i].name, (*values)[i]);

  Options simOptions = worldOptions(setup, options);
  std::optional<Watchdog> watchdog; // until the run is over
  if (options.watchdog)
    watchdog.emplace(simOptions.limits);
  std::unique_ptr<World> owned = runWorld(*model, setup, simOptions, body);
  watchdog.reset();
  World &world = *owned;
  if (options.lastRun)
    leaveToExit(std::move(owned));

  for (const Diagnostic &d : world.diagnostics()) {
    auto b = d.severity == Severity::Error ? diags.error(d.range, d.message) : diags.warning(d.range, d.message);
    for (const Diagnostic &n : d.notes)
      b.note(n.range, n.message);
  }
  if (!options.eventsFile.empty() &&
      !writeAtomically(options.eventsFile, [&](std::ostream &o) { writeEventsCsv(o, world); })) {
    diags.error({}, "cannot write the events to `" + options.eventsFile + "`");
    return finish(kExitIoError);
  }
  if (!options.traceFile.empty() && !writeAtomically(options.traceFile, [&](std::ostream &o) {
        writeChromeTrace(o, world, sources, setup.schedule);
      })) {
    diags.error({}, "cannot write the trace to `" + options.traceFile + "`");
    return finish(kExitIoError);
  }
  result.verdict = verdictOf(world);
  if (world.completed())
    result.report = world.report();
  if (!options.timelineFile.empty()) {
    if (!result.report) {
      diags.error({}, "no timeline: the schedule does not run to its end");
      return finish(exitCodeOf(result.verdict));
    }
    if (!writeAtomically(options.timelineFile, [&](std::ostream &o) {
          writeTimeline(o, options.timelineHtml, world, *result.report, sources, setup.schedule);
        })) {
      diags.error({}, "cannot write the timeline to `" + options.timelineFile + "`");
      return finish(kExitIoError);
    }
  }
  if (options.afterRun)
    if (std::string problem = options.afterRun(world, result); !problem.empty()) {
      diags.error({}, problem);
      return finish(kExitIoError);
    }
  return finish(exitCodeOf(result.verdict));
}

} // namespace schedc::sim
