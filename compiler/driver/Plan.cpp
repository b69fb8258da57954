// Plan implementation: the user's model and machine resolved once (with the memory cap as
// the machine's memory, so that a check's "fits" is the plan's), one cost model per model
// variant (t, b, sp, recomputation) shared by the configurations that time with it, one
// loaded program per family, then the search; each check is check::runCheck on one thread,
// its report kept (not printed), with diagnostics of its own.
#include "driver/Plan.h"

#include "check/Check.h"
#include "cost/HardwareCost.h"
#include "driver/CostModels.h"
#include "driver/FrontEnd.h"
#include "driver/Interop.h"
#include "driver/PlanReport.h"
#include "driver/TextTable.h"
#include "files/AtomicFile.h"
#include "interop/ImportSchedule.h"
#include "plan/Bounds.h"
#include "plan/OrderSearch.h"
#include "sema/Imports.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace schedc::driver {

namespace {

// The keys of KEY=VALUE settings.
std::vector<std::string> keysOf(const std::vector<std::string> &settings) {
  std::vector<std::string> keys;
  for (const std::string &s : settings)
    keys.push_back(s.substr(0, s.find('=')));
  return keys;
}

bool has(const std::vector<std::string> &keys, const char *key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Why a plan cannot judge a family that keeps model state off the device on this machine, or
// empty: each copy between memory tiers (and the update on the host) needs its bandwidth
// (cost::CostModel::missingForTier), and whether it fits needs the tier's capacity (check
// calls an unknown capacity "unknown"; a plan cannot rank what it cannot say fits).
std::string unjudgedOffload(const plan::Family &family, const cost::CostModel &cost, const cost::Hardware &machine) {
  auto missing = [](const char *key, const char *what) {
    return std::string("keeps model state off the device, and the machine gives no `") + key + "` to " + what +
           ": give it with --hardware-set=" + key + "=N";
  };
  if (family.offloadsOptimizer && !(machine.hostMemoryBytes > 0))
    return missing("host_memory_gb", "say whether it fits in host memory");
  if (family.offloadsWeights && !(machine.nvmeBytes > 0))
    return missing("nvme_gb", "say whether it fits on NVMe");
  std::vector<std::pair<Tier, Tier>> copies;
  if (family.offloadsOptimizer)
    copies = {{Tier::Device, Tier::Host}, {Tier::Host, Tier::Device}, {Tier::Host, Tier::Host}};
  if (family.offloadsWeights)
    copies.insert(copies.end(), {{Tier::Host, Tier::Nvme}, {Tier::Nvme, Tier::Host}, {Tier::Device, Tier::Nvme}});
  for (auto [from, to] : copies)
    if (std::string key = cost.missingForTier(from, to); !key.empty())
      return missing(key.c_str(), "time its copies or its update there");
  return "";
}

// Resolves a model variant's cost model, reading files through `sources`; "" or why not (a
// variant the model cannot be split into is a finding of the plan, not an error).
std::string resolveVariant(sim::SharedOptions &options, SourceManager &sources) {
  sim::DescriptionProblem problem;
  return sim::resolveCostModel(options, sourceReader(sources), problem) ? "" : problem.located();
}

// The progress line on a terminal: checks done, left at most, the best step so far.
class ProgressLine {
public:
  explicit ProgressLine(bool shown) : shown_(shown) {}
  // Rubs the line out, before the report.
  void clear() {
    if (drawn_)
      std::cerr << "\r" << std::string(80, ' ') << "\r" << std::flush;
    drawn_ = false;
  }
  void operator()(size_t done, size_t left, double best) {
    if (!shown_)
      return;
    constexpr int kWidth = 24;
    int filled = static_cast<int>(kWidth * static_cast<double>(done) / static_cast<double>(done + left));
    char text[128];
    std::snprintf(text, sizeof text, "\r[%s%s] %zu checked, at most %zu left, best %.4g s",
                  std::string(filled, '#').c_str(), std::string(kWidth - filled, ' ').c_str(), done, left, best);
    std::cerr << text << std::flush;
    drawn_ = true;
  }

private:
  bool shown_, drawn_ = false;
};

// One model variant: the options that time it (their cost model resolved), or why it cannot be.
struct Variant {
  sim::SharedOptions options;
  std::string problem;
  std::vector<double> fingerprint;
  bool sameAsLessRecomputation = false; // a variant with less recomputation runs the same
  const cost::HardwareCost *cost() const { return dynamic_cast<const cost::HardwareCost *>(options.costModel); }
};

// Checks one configuration's `program` as `schedc check` would, its report kept.
plan::Outcome checkProgram(const plan::Candidate &c, const Variant &variant, const LoadedProgram &program,
                           int64_t layers, const SourceManager &sources) {
  sim::RunOptions run;
  static_cast<sim::SharedOptions &>(run) = variant.options;
  run.threads = 1; // the plan runs a check a thread
  run.watchdog = false;
  sim::CheckResult result;
  result.verdict = sim::Verdict::Invalid;
  run.afterRun = [&](const sim::World &, sim::CheckResult &r) {
    result = r;
    return std::string();
  };
  DiagnosticEngine diags(sources, nullptr);
  std::map<std::string, int64_t> params = c.defines();
  params["layers"] = layers;
  std::ostringstream report;
  check::runCheck(*program.program, *program.schedule, params, run, sources, diags, report);
  plan::Outcome o;
  o.verdict = result.verdict;
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error && o.problem.empty())
      o.problem = sources.where(d.range) + ": " + d.message;
  if (result.report && result.hardware) {
    sim::HardwareFigures h = sim::hardwareFigures(result, *result.report);
    o.seconds = h.seconds;
    o.mfu = h.mfu;
    o.tokensPerSecond = h.tokensPerSecond;
    o.peakBytes = result.report->maxBytes;
    o.peakRank = result.report->maxBytesRank;
    o.fits = h.fits();
  }
  return o;
}

// A searched configuration's orders (plan/OrderSearch.h), as PyTorch's pipeline schedule
// files: the search's; at 1F1B's budget (p), 1F1B's own order as well, so that the one the
// plan keeps is never slower than 1F1B nor holds more.
std::vector<std::string> searchedOrders(const plan::Candidate &c, const Variant &variant) {
  std::vector<plan::StageCosts> costs = plan::stageCostsOf(c, *variant.cost(), variant.options.bytes);
  std::vector<int64_t> inFlight;
  for (int64_t s = 0; s < c.stages; ++s)
    inFlight.push_back(std::max<int64_t>(1, c.budget - s));
  double message = plan::stageMessageSeconds(c, *variant.cost());
  std::vector<std::string> orders{
      interop::writeActionTable(plan::searchOrder(costs, c.batches, inFlight, message).rows)};
  if (c.budget == c.stages)
    orders.push_back(interop::writeActionTable(plan::oneFOneBOrder(c.batches, inFlight).rows));
  return orders;
}

// Loads `csv` as `schedc check` loads a PyTorch file (its sends and receives as PyTorch's
// runtime adds them), into `sources`. One at a time: ANTLR's C++ runtime shares its parsers'
// caches between threads without locks.
std::optional<LoadedProgram> loadSearched(const std::string &csv, const Options &opts, SourceManager &sources,
                                          DiagnosticEngine &diags) {
  static std::mutex parsing;
  std::lock_guard<std::mutex> lock(parsing);
  uint32_t file = sources.addBuffer(kSearchedFile, csv);
  int exitCode = kExitOk;
  return loadProgram(file, opts, sources, diags, exitCode);
}

// Checks one configuration: a stdlib family's loaded program, or a searched configuration's
// orders loaded here (their own sources: the checks run on several threads), the faster kept
// where it holds no more.
plan::Outcome checkOne(const plan::Candidate &c, const Variant &variant, const LoadedProgram *program, int64_t layers,
                       const Options &opts, const SourceManager &sources) {
  if (!c.searched())
    return checkProgram(c, variant, *program, layers, sources);
  std::vector<plan::Outcome> outcomes;
  for (std::string &csv : searchedOrders(c, variant)) {
    SourceManager own;
    DiagnosticEngine diags(own, nullptr);
    std::optional<LoadedProgram> searched = loadSearched(csv, opts, own, diags);
    plan::Outcome o;
    if (searched) {
      o = checkProgram(c, variant, *searched, layers, own);
    } else { // diag-coverage: unreachable (an order the search made reads as a PyTorch file)
      o.problem = diags.diagnostics().empty() ? "the searched order did not load" : diags.diagnostics()[0].message;
    }
    o.order = std::move(csv);
    outcomes.push_back(std::move(o));
  }
  // The search's order, unless (at 1F1B's budget) it is slower than 1F1B's own or holds more:
  // then 1F1B's, said so. A check that stopped is the plan's to report; an order that is not
  // a correct step is shown as it is (a bug of the search: its problem in the report).
  plan::Outcome &searched = outcomes[0];
  if (outcomes.size() == 2) {
    plan::Outcome &oneFOneB = outcomes[1];
    if (searched.verdict != sim::Verdict::Correct)
      return std::move(searched);
    if (oneFOneB.verdict == sim::Verdict::Stopped)
      return std::move(oneFOneB);
    if (oneFOneB.verdict == sim::Verdict::Correct &&
        (searched.seconds > oneFOneB.seconds || searched.peakBytes > oneFOneB.peakBytes)) {
      oneFOneB.note = "1F1B's order: the searched one was slower or held more";
      return std::move(oneFOneB);
    }
  }
  return std::move(searched);
}

// The byte offset in `sources`' file of `at` (its column counts code points).
size_t offsetOf(const SourceManager &sources, SourceLoc at) {
  std::string_view line = sources.lineText(at.file, at.line);
  size_t byte = 0;
  for (uint32_t col = 1; col < at.col && byte < line.size(); ++col)
    do
      ++byte;
    while (byte < line.size() && (static_cast<unsigned char>(line[byte]) & 0xC0) == 0x80);
  return static_cast<size_t>(line.data() - sources.text(at.file).data()) + byte;
}

// The winner's family file with its schedule's parameter defaults set to the winner's
// values, under `header`; or nullopt where a parameter has no default to set.
std::optional<std::string> fixedSchedule(const LoadedProgram &program, std::map<std::string, int64_t> values,
                                         const SourceManager &sources, const std::string &header) {
  std::vector<std::pair<SourceRange, int64_t>> edits;
  for (const ir::Param &p : program.schedule->params) {
    auto it = values.find(p.name);
    if (it == values.end())
      continue;
    if (!p.defaultValue)
      return std::nullopt;
    edits.emplace_back(p.defaultValue->range, it->second);
  }
  uint32_t file = program.schedule->range.begin.file;
  std::string text(sources.text(file));
  std::sort(edits.begin(), edits.end(), [&](const auto &a, const auto &b) {
    return offsetOf(sources, a.first.begin) > offsetOf(sources, b.first.begin);
  });
  for (const auto &[range, value] : edits) { // the last first: earlier offsets hold
    size_t begin = offsetOf(sources, range.begin), end = offsetOf(sources, range.end) + 1;
    text.replace(begin, end - begin, std::to_string(value));
  }
  return header + text;
}

// Writes the winner's artifacts: -o, its .sched; --export, its PyTorch CSV. The exit code.
int writeArtifacts(const Options &opts, const PlanContext &context, const plan::Checked &best, const Variant &variant,
                   const LoadedProgram *program, SourceManager &sources, DiagnosticEngine &diags) {
  const plan::Candidate &c = best.candidate;
  std::map<std::string, int64_t> values = c.defines();
  values["layers"] = context.layers;
  std::string header =
      "// Written by `schedc plan`: " +
      (c.searched() ? std::string("the order searched for")
                    : "stdlib/" + std::string(c.family->name) + ".sched with its parameters set to") +
      " the fastest\n// configuration that fits, " + c.describe() + " (" + formatted("%.6g", best.outcome.seconds) +
      " s a step, " + formatted("%.6g", best.outcome.peakBytes / 1073741824.0) +
      " GiB on its fullest rank).\n// The model's settings are not the schedule's: check it with\n//   " +
      checkCommand(context, c, opts.output) + "\n";
  std::optional<std::string> text, csv;
  if (c.searched()) { // the file, and the schedule `schedc import` makes of it
    csv = best.outcome.order;
    uint32_t file = sources.addBuffer(opts.plan.exportFile.empty() ? kSearchedFile : opts.plan.exportFile, *csv);
    if (std::optional<uint32_t> imported = interop::addImported(file, importOptionsOf(opts), sources, diags))
      text = header + sources.text(*imported);
  } else {
    text = fixedSchedule(*program, values, sources, header);
  }
  if (!opts.output.empty()) {
    if (!text) // diag-coverage: unreachable (stdlib parameters have defaults; searched orders import)
      return usageError("the winner's schedule cannot be written as a .sched");
    if (!writeAtomically(opts.output, *text)) {
      std::cerr << "schedc: error: cannot write `" << opts.output << "`\n";
      return kExitIoError;
    }
  }
  if (opts.plan.exportFile.empty())
    return kExitOk;
  if (csv) {
    if (writeAtomically(opts.plan.exportFile, *csv))
      return kExitOk;
    std::cerr << "schedc: error: cannot write `" << opts.plan.exportFile << "`\n";
    return kExitIoError;
  }
  Options exporting = opts;
  exporting.output = opts.plan.exportFile;
  exporting.comms = false;
  sim::RunOptions run;
  static_cast<sim::SharedOptions &>(run) = variant.options;
  return runExport(exporting, run, *program->program, *program->schedule, values, sources, diags);
}

} // namespace

int runPlan(const Options &opts, SourceManager &sources, DiagnosticEngine &diags) {
  const PlanOptions &asked = opts.plan;
  PlanContext context;
  context.sharedArguments = opts.sharedArguments;
  context.fixedModelKeys = keysOf(opts.modelSettings);
  context.stdlibDir = sema::defaultStdlibDir();
  context.exportFile = asked.exportFile;
  context.top = asked.top;
  context.accelerators = asked.accelerators;
  context.globalBatch = asked.globalBatch;

  // The user's model and machine (the driver resolved them), with the sequence and the memory
  // cap set over them where asked.
  Options base = opts;
  if (!base.bytes.transformer)
    // diag-coverage: unreachable (checkPlanOptions asks for --model, and every model it names is a transformer)
    return usageError("plan lays out a transformer: --model names a preset or a model file (the tanh layer of "
                      "--hidden has no layer count to split)");
  if (asked.sequence)
    base.modelSettings.push_back("sequence=" + std::to_string(asked.sequence));
  if (asked.memoryCapGiB > 0 || asked.headroom >= 0) {
    double memoryGiB = dynamic_cast<const cost::HardwareCost &>(*base.costModel).hardware().memoryBytes / 1073741824.0;
    base.hardwareSettings.push_back("memory_gb=" + formatted("%.6g", asked.memoryCapGiB > 0
                                                                         ? asked.memoryCapGiB
                                                                         : memoryGiB * (1 - asked.headroom / 100)));
  }
  for (size_t i = opts.modelSettings.size(); i < base.modelSettings.size(); ++i)
    context.addedArguments.push_back("--model-set=" + base.modelSettings[i]);
  for (size_t i = opts.hardwareSettings.size(); i < base.hardwareSettings.size(); ++i)
    context.addedArguments.push_back("--hardware-set=" + base.hardwareSettings[i]);
  if (!context.addedArguments.empty())
    if (int code = resolveCostModel(base, sources, diags); code != kExitOk)
      return code;
  const auto &machine = dynamic_cast<const cost::HardwareCost &>(*base.costModel).hardware();
  const cost::Transformer &model = *base.bytes.transformer;
  context.model = model.name;
  context.machine = machine.name;
  context.bytesModel = base.bytes.describe();
  context.sequence = model.sequence;
  context.layers = model.layers;
  context.experts = model.hasExperts();
  context.memoryBytes = machine.memoryBytes;
  context.modelOwn = plan::Settings{model.tensorParallel, model.microBatch, model.sequenceParallel, model.recompute};
  context.usableBytes = machine.memoryBytes - machine.overheadBytes;

  // The problem: what the user's --model-set fixed stays fixed.
  plan::Problem problem;
  problem.accelerators = asked.accelerators;
  problem.globalBatch = asked.globalBatch;
  problem.perNode = machine.acceleratorsPerNode;
  problem.layers = model.layers;
  problem.modelExperts = model.experts;
  problem.denseLayers = std::min(model.denseLayers, model.layers);
  if (has(context.fixedModelKeys, "tensor_parallel"))
    problem.tensorParallel = model.tensorParallel;
  if (has(context.fixedModelKeys, "micro_batch"))
    problem.microBatch = model.microBatch;
  if (has(context.fixedModelKeys, "sequence_parallel"))
    problem.sequenceParallel = model.sequenceParallel;
  if (has(context.fixedModelKeys, "recompute"))
    problem.recompute = model.recompute;
  for (const std::string &name : asked.schedules) {
    const plan::Family *family = plan::findFamily(name);
    if (!family)
      return usageError("--schedules: no schedule family `" + name + "` (expected " + plan::familyNames() + ")");
    if (std::string why = unjudgedOffload(*family, *base.costModel, machine); !why.empty())
      return usageError("--schedules: `" + name + "` " + why);
    if (family->layout == plan::Layout::ExpertMesh && !model.hasExperts())
      return usageError("--schedules: `" + name + "` splits a mixture-of-experts model's routed experts, and " +
                        model.name + " has none (search it with the other families)");
    if (!asked.exportFile.empty() && family->layout != plan::Layout::Pipeline)
      return usageError("--export writes the winner as a PyTorch pipeline schedule, one replica's stages; `" + name +
                        "` has data-parallel replicas, which such a file does not hold (search the pipeline "
                        "families, or leave --export out)");
    if (std::find(problem.families.begin(), problem.families.end(), family) == problem.families.end())
      problem.families.push_back(family);
  }
  if (problem.families.empty()) // every family; with --export, those a PyTorch pipeline file can hold
    for (const plan::Family &f : plan::families()) {
      if ((!asked.exportFile.empty() && f.layout != plan::Layout::Pipeline) ||
          (f.layout == plan::Layout::ExpertMesh && !model.hasExperts()))
        continue;
      if (std::string why = unjudgedOffload(f, *base.costModel, machine); !why.empty()) {
        context.leftOut.push_back(std::string(f.name) + " (it " + why + ")");
        continue;
      }
      problem.families.push_back(&f);
    }
  context.expertParallel = std::any_of(problem.families.begin(), problem.families.end(),
                                       [](const plan::Family *f) { return f->layout == plan::Layout::ExpertMesh; });
  std::vector<plan::Candidate> enumerated = plan::enumerate(problem);

  // One cost model per variant; the configurations a variant cannot time are dropped.
  std::map<plan::Settings, size_t> variantIndex;
  std::vector<Variant> variants;
  std::vector<plan::Candidate> candidates;
  size_t unsplit = 0, sameRun = 0;
  std::string unsplitWhy;
  for (plan::Candidate &c : enumerated) {
    auto [it, added] = variantIndex.emplace(c.settings, variants.size());
    if (added) {
      Variant v;
      v.options = base;
      for (const std::string &s : c.settings.modelSettings(context.fixedModelKeys, context.modelOwn))
        v.options.modelSettings.push_back(s);
      v.problem = resolveVariant(v.options, sources);
      if (v.problem.empty()) {
        v.fingerprint = plan::fingerprintOf(*v.cost(), v.options.bytes);
        plan::Settings less = c.settings;
        for (cost::Recompute r : {cost::Recompute::None, cost::Recompute::Selective}) {
          less.recompute = r;
          auto found = variantIndex.find(less);
          if (r < c.settings.recompute && found != variantIndex.end() &&
              variants[found->second].fingerprint == v.fingerprint)
            v.sameAsLessRecomputation = true;
        }
      }
      variants.push_back(std::move(v));
    }
    const Variant &variant = variants[it->second];
    if (!variant.problem.empty()) {
      ++unsplit;
      unsplitWhy = variant.problem;
      continue;
    }
    if (variant.sameAsLessRecomputation && !asked.exhaustive) {
      ++sameRun;
      continue;
    }
    c.model = it->second;
    plan::Bounds b = plan::boundsOf(c, *variant.cost(), variant.options.bytes, opts.overlapHidden);
    c.secondsBound = b.seconds;
    c.bytesBound = b.bytes;
    candidates.push_back(c);
  }

  // Every family's program, loaded once.
  std::map<const plan::Family *, LoadedProgram> programs;
  for (const plan::Family *f : problem.families) {
    if (f->order == plan::Order::Searched)
      continue; // each configuration's own order, made when it is checked
    int exitCode = kExitOk;
    std::optional<LoadedProgram> loaded = loadProgram(familyFile(context, *f), opts, sources, diags, exitCode);
    if (!loaded)
      return exitCode;
    programs.emplace(f, std::move(*loaded));
  }

  plan::SearchOptions searchOptions;
  searchOptions.usableBytes = context.usableBytes;
  searchOptions.top = asked.top;
  searchOptions.exhaustive = asked.exhaustive;
  searchOptions.threads = opts.threads == sim::kAutoThreads ? sim::processors() : opts.threads;
  context.threads = searchOptions.threads;
  ProgressLine progress(opts.format == Format::Text && isatty(STDERR_FILENO));
  plan::SearchResult result = plan::search(
      std::move(candidates), searchOptions,
      [&](const plan::Candidate &c) {
        auto program = programs.find(c.family);
        return checkOne(c, variants[c.model], program == programs.end() ? nullptr : &program->second, context.layers,
                        opts, sources);
      },
      [&](size_t done, size_t left, double best) { progress(done, left, best); });
  result.counts.enumerated += unsplit + sameRun;
  result.counts.sameRun = sameRun;
  result.counts.cannotSplit = unsplit;
  result.cannotSplitWhy = unsplitWhy;
  progress.clear();
  for (plan::Checked &c : result.unranked) // only a ranked order may be written or named
    c.outcome.order.clear();

  if (!result.ranked.empty() && result.ranked[0].candidate.searched())
    context.winnerOrder = result.ranked[0].outcome.order;
  if (opts.format == Format::Json)
    std::cout << planJson(context, result);
  else
    printPlanText(context, result, std::cout);
  int code = result.ranked.empty() ? kExitCheckFailed : kExitOk;
  if (!result.ranked.empty()) {
    const plan::Checked &best = result.ranked[0];
    auto program = programs.find(best.candidate.family);
    code = writeArtifacts(opts, context, best, variants[best.candidate.model],
                          program == programs.end() ? nullptr : &program->second, sources, diags);
  }
  if (result.counts.stopped) { // after the winner's files: a faster configuration may be missing
    std::cerr << "schedc: error: " << result.counts.stopped
              << " checks stopped at a resource limit, so a faster configuration may be missing (the first: "
              << result.stoppedProblem
              << "); run the plan on fewer threads (--threads=1) or raise --memory-limit or --time-limit\n";
    return kExitLimit;
  }
  return code;
}

} // namespace schedc::driver
