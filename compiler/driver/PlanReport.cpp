// PlanReport implementation: the table aligned as `compare` aligns its own (text left,
// numbers right), figures as `check` prints them, the command line shell-quoted.
#include "driver/PlanReport.h"

#include "cost/Transformer.h"
#include "driver/TextTable.h"
#include "report/ReportFormat.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>

namespace schedc::driver {

namespace {

constexpr double kGiB = 1073741824.0;
const TableRow kHeader{"#", "configuration", "step s", "MFU", "tokens/s/GPU", "peak GiB", "fits"};
const std::set<size_t> kLeftColumns{1, 6}; // the configuration, fits

// `arg` as the shell reads it back: as it is when it has only safe characters, else quoted.
std::string shellWord(const std::string &arg) {
  if (!arg.empty() &&
      arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") ==
          std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The --model-set texts a check of `c` adds to the user's.
std::vector<std::string> modelSettingsOf(const PlanContext &context, const plan::Candidate &c) {
  return c.settings.modelSettings(context.fixedModelKeys, context.modelOwn);
}

TableRow rowOf(size_t rank, const plan::Checked &c) {
  const plan::Outcome &o = c.outcome;
  return {std::to_string(rank),
          c.candidate.describe() + (o.note.empty() ? "" : " (" + o.note + ")"),
          formatted("%.4g", o.seconds),
          formatted("%.1f%%", 100 * o.mfu),
          formatted("%.0f", o.tokensPerSecond),
          formatted("%.2f", o.peakBytes / kGiB),
          o.fits ? "yes" : "no"};
}

// The check line of a configuration, or "" for a searched order that is not written: each
// searched configuration has an order of its own, and --export writes the winner's alone.
std::string commandOf(const PlanContext &context, const plan::Checked &c) {
  if (c.candidate.searched() && (context.exportFile.empty() || c.outcome.order != context.winnerOrder))
    return "";
  return checkCommand(context, c.candidate);
}

std::string checkedJson(const PlanContext &context, const plan::Checked &c) {
  const plan::Candidate &k = c.candidate;
  const plan::Outcome &o = c.outcome;
  std::string command = commandOf(context, c);
  auto text = [](const std::string &value) { return value.empty() ? std::string("null") : sim::jsonString(value); };
  std::string defines;
  for (const auto &[name, value] : k.defines())
    defines += (defines.empty() ? "" : ", ") + sim::jsonString(name) + ": " + std::to_string(value);
  defines += std::string(defines.empty() ? "" : ", ") + "\"layers\": " + std::to_string(context.layers);
  std::string settings;
  for (const std::string &s : modelSettingsOf(context, k))
    settings += (settings.empty() ? "" : ", ") + sim::jsonString(s);
  return "{\"configuration\": " + sim::jsonString(k.describe()) + ", \"schedule\": " + sim::jsonString(k.family->name) +
         ", \"file\": " + (k.searched() && command.empty() ? "null" : sim::jsonString(scheduleFile(context, k))) +
         ", \"defines\": {" + defines + "}, \"model_set\": [" + settings +
         "], \"tensor_parallel\": " + std::to_string(k.settings.tensorParallel) +
         ", \"pipeline_parallel\": " + std::to_string(k.stages) + ", \"data_parallel\": " + std::to_string(k.replicas) +
         ", \"expert_parallel\": " + std::to_string(k.experts) +
         ", \"micro_batch\": " + std::to_string(k.settings.microBatch) +
         ", \"sequence_parallel\": " + (k.settings.sequenceParallel ? "true" : "false") +
         ", \"recompute\": " + sim::jsonString(cost::recomputeName(k.settings.recompute)) +
         ", \"step_s\": " + sim::jsonNumber(o.seconds) + ", \"mfu\": " + sim::jsonNumber(o.mfu) +
         ", \"tokens_per_second_per_gpu\": " + sim::jsonNumber(o.tokensPerSecond) +
         ", \"peak_bytes\": " + formatted("%.0f", o.peakBytes) + ", \"peak_rank\": " + std::to_string(o.peakRank) +
         ", \"fits\": " + (o.fits ? "true" : "false") +
         ", \"verdict\": " + sim::jsonString(sim::verdictName(o.verdict)) +
         ", \"step_bound_s\": " + sim::jsonNumber(k.secondsBound) +
         ", \"peak_bytes_bound\": " + formatted("%.0f", k.bytesBound) + ", \"note\": " + text(o.note) +
         ", \"problem\": " + text(o.problem) + ", \"command\": " + text(command) + "}";
}

std::string listJson(const PlanContext &context, const std::vector<plan::Checked> &list, size_t most) {
  std::string s;
  for (size_t i = 0; i < list.size() && i < most; ++i)
    s += std::string(i ? ",\n    " : "\n    ") + checkedJson(context, list[i]);
  return "[" + s + (s.empty() ? "]" : "\n  ]");
}

// The Pareto front of step against peak bytes up to the K-th ranked step (beyond it, the
// configurations were not all checked): in rank order, each with fewer bytes than every one
// before it.
std::vector<plan::Checked> exactFront(const PlanContext &context, const plan::SearchResult &r) {
  std::vector<plan::Checked> front;
  if (r.ranked.empty())
    return front;
  double last = r.ranked[std::min(context.top, r.ranked.size()) - 1].outcome.seconds;
  for (const plan::Checked &c : r.ranked)
    if (c.outcome.seconds <= last && (front.empty() || c.outcome.peakBytes < front.back().outcome.peakBytes))
      front.push_back(c);
  return front;
}

} // namespace

std::string familyFile(const PlanContext &context, const plan::Family &family) {
  return context.stdlibDir + "/" + family.name + ".sched";
}

std::string scheduleFile(const PlanContext &context, const plan::Candidate &c) {
  if (c.searched()) // written by --export
    return context.exportFile.empty() ? kSearchedFile : context.exportFile;
  return familyFile(context, *c.family);
}

std::string checkCommand(const PlanContext &context, const plan::Candidate &c, const std::string &written) {
  std::string command = "schedc check " + shellWord(written.empty() ? scheduleFile(context, c) : written);
  if (written.empty()) { // a written schedule has its parameters; a searched order's file takes the layers
    for (const auto &[name, value] : c.defines())
      command += " -D " + name + "=" + std::to_string(value);
    if (c.searched())
      command += " -D layers=" + std::to_string(context.layers);
  }
  for (const std::string &a : context.sharedArguments)
    command += " " + shellWord(a);
  for (const std::string &a : context.addedArguments) // the sequence and the cap, before the settings, as the plan
    command += " " + shellWord(a);
  for (const std::string &s : modelSettingsOf(context, c))
    command += " --model-set=" + shellWord(s);
  return command;
}

void printPlanText(const PlanContext &context, const plan::SearchResult &r, std::ostream &out) {
  const plan::SearchCounts &n = r.counts;
  out << "Plan: " << context.model << " on " << context.accelerators << " " << context.machine
      << " accelerators, global batch " << context.globalBatch << " x " << context.sequence << " tokens, "
      << context.bytesModel << "; " << formatted("%.2f", context.usableBytes / kGiB) << " of "
      << formatted("%.2f", context.memoryBytes / kGiB) << " GiB usable\n";
  if (!context.exportFile.empty())
    out << "(--export: the pipeline families alone, whose one replica's stages a PyTorch pipeline file holds)\n";
  for (const std::string &family : context.leftOut)
    out << "Not searched: " << family << "\n";
  if (context.experts)
    out << (context.expertParallel
                ? "(a mixture-of-experts model: expert parallelism is searched with stdlib/moe.sched and "
                  "dualpipev_moe.sched, groups of ep replicas at t = 1; the other families keep its layers whole)\n"
                : "(a mixture-of-experts model: its layers are searched whole; expert parallelism, stdlib/moe.sched "
                  "and dualpipev_moe.sched, is not among the searched families)\n");
  if (n.enumerated == 0) {
    out << "No configuration: none of the searched families lays out " << context.accelerators
        << " accelerators for a global batch of " << context.globalBatch << " (t divides a node's accelerators, p the "
        << context.layers << " layers and the family's chunks, d the global batch"
        << (context.exportFile.empty() ? "" : "; with --export, pipelines of p >= 2 stages and one replica") << ")\n";
    return;
  }
  out << "Searched " << n.enumerated << " configurations: ";
  if (n.cannotSplit)
    out << n.cannotSplit << " the model cannot be split into (" << r.cannotSplitWhy << "), ";
  if (n.sameRun)
    out << n.sameRun << " the same run as one with less recomputation, ";
  out << n.overMemory << " cannot fit (bytes bound), " << n.slower << " bounded no faster than the " << context.top
      << " best, " << n.checked << " checked (" << n.notCorrect << " not correct, " << n.overCapacity
      << " over memory) in " << formatted("%.2f", r.wallSeconds) << " s on " << context.threads << " thread"
      << (context.threads == 1 ? "" : "s") << " ("
      << formatted("%.0f", r.wallSeconds > 0 ? static_cast<double>(n.checked) / r.wallSeconds : 0) << " checks/s)\n";
  if (n.boundViolations)
    out << "warning: " << n.boundViolations
        << " checked configurations came out below their bounds (a bug in plan/Bounds.cpp: the pruning may have "
           "dropped a winner; run with --exhaustive)\n";
  if (r.ranked.empty()) {
    out << "\nNo configuration is a correct step that fits in " << formatted("%.2f", context.usableBytes / kGiB)
        << " GiB";
    if (r.leastBytes.family)
      out << "; the least needs " << formatted("%.2f", r.leastBytes.bytesBound / kGiB)
          << " GiB or more on its fullest rank (" << r.leastBytes.describe() << ")";
    out << ". More accelerators, a smaller --global-batch or more memory (--memory-cap) may change that\n";
    return;
  }
  std::vector<TableRow> rows{kHeader};
  for (size_t i = 0; i < r.ranked.size() && i < context.top; ++i)
    rows.push_back(rowOf(i + 1, r.ranked[i]));
  out << "\n";
  printTable(rows, kLeftColumns, out);
  out << "\nPareto front, step against the fullest rank's peak (complete up to the step of #"
      << std::min(context.top, r.ranked.size()) << "):\n";
  std::vector<TableRow> front{kHeader};
  for (const plan::Checked &c : exactFront(context, r))
    front.push_back(rowOf(front.size(), c));
  printTable(front, kLeftColumns, out);
  const plan::Candidate &best = r.ranked[0].candidate;
  out << "\nBest: " << best.describe() << "\n  " << checkCommand(context, best) << "\n";
  if (best.searched() && context.exportFile.empty())
    out << "  (a searched order: --export=FILE.csv writes it, -o FILE.sched its schedule)\n";
}

std::string planJson(const PlanContext &context, const plan::SearchResult &r) {
  const plan::SearchCounts &n = r.counts;
  std::string s = "{\n  \"schema\": \"schedc-plan/1\",\n";
  s += "  \"model\": " + sim::jsonString(context.model) + ",\n  \"hardware\": " + sim::jsonString(context.machine) +
       ",\n  \"accelerators\": " + std::to_string(context.accelerators) +
       ",\n  \"global_batch\": " + std::to_string(context.globalBatch) +
       ",\n  \"sequence\": " + std::to_string(context.sequence) +
       ",\n  \"usable_bytes\": " + formatted("%.0f", context.usableBytes) + ",\n";
  std::string leftOut;
  for (const std::string &family : context.leftOut)
    leftOut += (leftOut.empty() ? "" : ", ") + sim::jsonString(family);
  s += "  \"not_searched\": [" + leftOut + "],\n";
  s += "  \"counts\": {\"enumerated\": " + std::to_string(n.enumerated) +
       ", \"cannot_split\": " + std::to_string(n.cannotSplit) +
       (n.cannotSplit ? ", \"cannot_split_why\": " + sim::jsonString(r.cannotSplitWhy) : std::string()) +
       ", \"same_run\": " + std::to_string(n.sameRun) + ", \"pruned_memory\": " + std::to_string(n.overMemory) +
       ", \"pruned_time\": " + std::to_string(n.slower) + ", \"checked\": " + std::to_string(n.checked) +
       ", \"not_correct\": " + std::to_string(n.notCorrect) + ", \"stopped\": " + std::to_string(n.stopped) +
       ", \"over_memory\": " + std::to_string(n.overCapacity) +
       ", \"bound_violations\": " + std::to_string(n.boundViolations) + "},\n";
  s += "  \"pipeline_families_only\": " + std::string(context.exportFile.empty() ? "false" : "true") + ",\n";
  s += "  \"expert_parallelism\": " +
       sim::jsonString(!context.experts         ? "no experts"
                       : context.expertParallel ? "searched"
                                                : "not searched") +
       ",\n";
  s += "  \"wall_seconds\": " + sim::jsonNumber(r.wallSeconds) +
       ",\n  \"threads\": " + std::to_string(context.threads) + ",\n";
  s += "  \"best\": " + (r.ranked.empty() ? std::string("null") : checkedJson(context, r.ranked[0])) + ",\n";
  s += "  \"ranked\": " + listJson(context, r.ranked, context.top) + ",\n";
  std::vector<plan::Checked> front = exactFront(context, r);
  s += "  \"pareto\": " + listJson(context, front, front.size()) + ",\n";
  s += "  \"not_ranked\": " + listJson(context, r.unranked, r.unranked.size()) + "\n}\n";
  return s;
}

} // namespace schedc::driver
