// ReportFormat implementation, with a minimal JSON writer (strings escaped, numbers in the
// same Python repr as the text report).
#include "report/ReportFormat.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace schedc::sim {

Verdict verdictOf(const World &w) {
  if (w.stoppedAtLimit())
    return Verdict::Stopped;
  if (!w.completed())
    return Verdict::Unfinished;
  if (w.hasErrors())
    return Verdict::Incorrect;
  return w.forged() ? Verdict::Forged : Verdict::Correct;
}

HardwareFigures hardwareFigures(const CheckResult &r, const Report &rep) {
  HardwareFigures h;
  const cost::Hardware &machine = r.hardware->hardware();
  h.seconds = rep.makespan.asDouble();
  double peak = h.seconds * static_cast<double>(r.model.ranks) * r.hardware->peak();
  h.mfu = peak > 0 ? rep.modelFlops / peak : 0;
  h.hfu = peak > 0 ? rep.flops / peak : 0;
  const cost::LayerModel &model = r.hardware->model();
  double perMicroBatch = model.modelFlopsPerMicroBatch();
  if (perMicroBatch > 0 && h.seconds > 0)
    h.tokensPerSecond = rep.modelFlops / perMicroBatch * model.tokensPerMicroBatch() / h.seconds /
                        static_cast<double>(r.model.ranks * model.tensorParallel());
  h.capacity = machine.memoryBytes;
  h.overhead = machine.overheadBytes;
  for (const RankFigures &f : rep.ranks)
    if (f.peakBytes + h.overhead > h.capacity)
      h.over.push_back(f.rank);
  // Node -> its accelerators' host and NVMe peaks: a rank's bytes are each of its
  // tensor-parallel accelerators' (the model's `tensor_parallel`), as its device bytes are.
  std::map<int64_t, std::pair<double, double>> nodes;
  const auto accelerators = static_cast<double>(r.hardware->model().tensorParallel());
  for (const RankFigures &f : rep.ranks) {
    auto &[host, nvme] = nodes[r.hardware->nodeOf(f.rank)];
    host += f.peakHostBytes * accelerators;
    nvme += f.peakNvmeBytes * accelerators;
  }
  h.host.capacity = machine.hostMemoryBytes;
  h.nvme.capacity = machine.nvmeBytes;
  for (const auto &[node, peaks] : nodes) {
    if (peaks.first > h.host.peak)
      h.host = {peaks.first, node, h.host.capacity};
    if (peaks.second > h.nvme.peak)
      h.nvme = {peaks.second, node, h.nvme.capacity};
  }
  return h;
}

std::string jsonNumber(double v) {
  return pythonFloatRepr(v);
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

namespace {

const char *verdictLine(Verdict v) {
  switch (v) {
  case Verdict::Correct: return "Correct!";
  case Verdict::Forged: return "Not a real training step: it uses gradients forged with `fake_grad`";
  case Verdict::Incorrect: return "Incorrect: see the errors above";
  case Verdict::Unfinished: return "The schedule cannot run to its end: see the errors above";
  case Verdict::Stopped: return "Stopped at a resource limit before the end: the schedule was not judged";
  case Verdict::Invalid: return "Invalid: see the errors above";
  }
  return "";
}

bool met(const Number &value, int64_t target) {
  return !(value > Number::integer(target));
}

// A double as the shortest text that reads back the same (Python's repr).
std::string num(double v) {
  return jsonNumber(v);
}

// A whole number held in a double (bytes), without a fraction.
std::string integral(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

// What the fullest rank's bytes were at its peak (none: no rank).
ByteShares fullestShares(const Report &rep) {
  return rep.ranks.empty() ? ByteShares{} : rep.ranks[static_cast<size_t>(rep.maxBytesRank)].peakShares;
}

// "Peak memory: ...", "Step time: ..." and "Fits: ..." for the text report, in GiB and
// seconds (no puzzle units): the fullest rank's bytes and what they are.
std::string hardwareLines(const CheckResult &r, const Report &rep) {
  HardwareFigures h = hardwareFigures(r, rep);
  const cost::Hardware &machine = r.hardware->hardware();
  std::string s = "Peak memory: " + gibibytes(rep.maxBytes) + " (" + integral(rep.maxBytes) + " bytes) on rank " +
                  std::to_string(rep.maxBytesRank) + " (" + r.bytes.describe() + ")";
  const ByteShares shares = fullestShares(rep);
  std::string parts;
  for (int i = 0; i < kByteShares; ++i)
    if (shares[static_cast<size_t>(i)] > 0)
      parts += (parts.empty() ? "" : ", ") + std::string(byteShareName(static_cast<ByteShare>(i))) + " " +
               gibibytes(shares[static_cast<size_t>(i)]);
  s += (parts.empty() ? "" : ": " + parts) + "\n";
  char line[320];
  std::snprintf(line, sizeof line, "Step time: %.4g s on %s (%s): MFU %.1f%%, HFU %.1f%% of %.1f TFLOP/s %s", h.seconds,
                machine.name.c_str(), r.hardware->model().name().c_str(), 100 * h.mfu, 100 * h.hfu,
                r.hardware->peak() / 1e12, r.hardware->gemmPrecision());
  s += line;
  if (h.tokensPerSecond > 0) {
    std::snprintf(line, sizeof line, "; %.0f tokens/s per GPU", h.tokensPerSecond);
    s += line;
  }
  s += "\n";
  std::string overhead = h.overhead > 0 ? " and the runtime's " + gibibytes(h.overhead) : "";
  if (h.over.empty()) {
    s += "Fits: yes: the fullest rank, " + std::to_string(rep.maxBytesRank) + ", holds " + gibibytes(rep.maxBytes) +
         overhead + " of the " + gibibytes(h.capacity) + " of a " + machine.name + " accelerator\n";
  } else {
    s += "Fits: no: rank " + std::to_string(rep.maxBytesRank) + " needs " + gibibytes(rep.maxBytes) + overhead + ", " +
         gibibytes(rep.maxBytes + h.overhead - h.capacity) + " more than the " + gibibytes(h.capacity) + " of a " +
         machine.name + " accelerator; " + std::to_string(h.over.size()) + " of " + std::to_string(rep.ranks.size()) +
         " ranks do not fit\n";
  }
  for (const auto &[tier, key, t] :
       {std::tuple{"host memory", "host_memory_gb", &h.host}, std::tuple{"NVMe", "nvme_gb", &h.nvme}}) {
    if (t->peak == 0)
      continue;
    std::string node = "node " + std::to_string(t->node) + " (its ranks' peaks summed)";
    if (!t->known())
      s += std::string("Fits in ") + tier + ": unknown: " + node + " holds " + gibibytes(t->peak) + ", and " +
           machine.name + " gives no " + key + "\n";
    else if (t->fits())
      s += std::string("Fits in ") + tier + ": yes: the fullest " + node + " holds " + gibibytes(t->peak) + " of its " +
           gibibytes(t->capacity) + "\n";
    else
      s += std::string("Fits in ") + tier + ": no: " + node + " needs " + gibibytes(t->peak) + ", " +
           gibibytes(t->peak - t->capacity) + " more than its " + gibibytes(t->capacity) + "\n";
  }
  return s;
}

// A node tier's figures: {"peak_bytes", "node", "capacity_bytes" (null: not given), "fits"}.
std::string nodeTierJson(const HardwareFigures::NodeTier &t) {
  return "{\"peak_bytes\": " + integral(t.peak) + ", \"node\": " + std::to_string(t.node) +
         ", \"capacity_bytes\": " + (t.capacity > 0 ? integral(t.capacity) : "null") + ", \"fits\": " +
         (!t.known() ? "null"
          : t.fits() ? "true"
                     : "false") +
         "}";
}

// The JSON object of the same figures.
std::string hardwareJson(const CheckResult &r, const Report &rep) {
  HardwareFigures h = hardwareFigures(r, rep);
  std::string over;
  for (int64_t rank : h.over)
    over += (over.empty() ? "" : ", ") + std::to_string(rank);
  std::string ranks;
  for (const RankFigures &f : rep.ranks) {
    const auto &busy = f.busy;
    ranks += std::string(ranks.empty() ? "" : ", ") + "{\"rank\": " + std::to_string(f.rank) +
             ", \"compute_busy\": " + num(busy[0]) + ", \"collectives_busy\": " + num(busy[1]) +
             ", \"point_to_point_busy\": " + num(busy[2]) + ", \"transfers_busy\": " + num(busy[3]) +
             ", \"compute_idle\": " + num(f.end.asDouble() - busy[0]) +
             ", \"peak_host_bytes\": " + integral(f.peakHostBytes) +
             ", \"peak_nvme_bytes\": " + integral(f.peakNvmeBytes) + "}";
  }
  std::string breakdown;
  const ByteShares shares = fullestShares(rep);
  for (int i = 0; i < kByteShares; ++i)
    breakdown += std::string(i ? ", " : "") + jsonString(byteShareKey(static_cast<ByteShare>(i))) + ": " +
                 integral(shares[static_cast<size_t>(i)]);
  double parameters = r.hardware->model().totalParameters(), active = r.hardware->model().activeParameters();
  return "  \"hardware\": {\"model\": " + jsonString(r.hardware->model().name()) +
         ", \"machine\": " + jsonString(r.hardware->hardware().name) + ", \"step_seconds\": " + num(h.seconds) +
         ", \"mfu\": " + num(h.mfu) + ", \"hfu\": " + num(h.hfu) +
         ", \"tokens_per_second_per_gpu\": " + num(h.tokensPerSecond) +
         ", \"parameters\": " + (parameters > 0 ? integral(parameters) : "null") +
         ", \"active_parameters\": " + (active > 0 ? integral(active) : "null") +
         ", \"peak_bytes\": " + integral(rep.maxBytes) + ", \"peak_bytes_rank\": " + std::to_string(rep.maxBytesRank) +
         ", \"peak_breakdown\": {" + breakdown + "}, \"overhead_bytes\": " + integral(h.overhead) +
         ", \"gemm_precision\": " + jsonString(r.hardware->gemmPrecision()) +
         ", \"peak_flops\": " + num(r.hardware->peak()) + ", \"model_flops\": " + num(rep.modelFlops) +
         ", \"accelerator_memory\": " + integral(h.capacity) + ", \"fits\": " + (h.fits() ? "true" : "false") +
         ", \"fits_device\": " + (h.over.empty() ? "true" : "false") + ", \"ranks_over_memory\": [" + over +
         "], \"host\": " + nodeTierJson(h.host) + ", \"nvme\": " + nodeTierJson(h.nvme) + ", \"per_rank\": [" + ranks +
         "]},\n";
}

// The peak bytes predicted, and measured where a real backend ran, in host memory and on
// NVMe, each at its fullest rank: a line each for the tiers used (predicted or measured).
std::string tierLines(const CheckResult &r, const Report &rep) {
  std::string s;
  const char *backend = r.backend.c_str();
  for (auto [name, predicted, measured] : {std::tuple{"Host", &RankFigures::peakHostBytes, &r.measuredHostPeak},
                                           std::tuple{"NVMe", &RankFigures::peakNvmeBytes, &r.measuredNvmePeak}}) {
    size_t top = 0;
    for (size_t i = 1; i < rep.ranks.size(); ++i)
      if (rep.ranks[i].*predicted > rep.ranks[top].*predicted)
        top = i;
    const bool measuredAny = std::any_of(measured->begin(), measured->end(), [](int64_t b) { return b > 0; });
    if (rep.ranks.empty() || !(rep.ranks[top].*predicted > 0 || measuredAny))
      continue;
    s += std::string("Maximum ") + name + " Bytes: " + bytesText(rep.ranks[top].*predicted) +
         " at GPU: " + std::to_string(top) + "\n";
    if (top < measured->size())
      s += std::string("Measured Maximum ") + name + " Bytes: " + bytesText(static_cast<double>((*measured)[top])) +
           " at GPU: " + std::to_string(top) + " (" + backend + " backend)\n";
  }
  return s;
}

std::string location(const SourceRange &at, const SourceManager &sources) {
  if (!at.valid())
    return "null";
  SourceRange r = sources.shown(at);
  return "{\"file\": " + jsonString(sources.name(r.begin.file)) + ", \"line\": " + std::to_string(r.begin.line) +
         ", \"column\": " + std::to_string(r.begin.col) + "}";
}

std::string diagnostic(const Diagnostic &d, const SourceManager &sources) {
  std::string s = "{\"severity\": " + jsonString(severityName(d.severity)) + ", \"message\": " + jsonString(d.message) +
                  ", \"location\": " + location(d.range, sources) + ", \"notes\": [";
  for (size_t i = 0; i < d.notes.size(); ++i)
    s += (i ? ", " : "") + diagnostic(d.notes[i], sources);
  return s + "]}";
}

} // namespace

const char *verdictName(Verdict v) {
  switch (v) {
  case Verdict::Correct: return "correct";
  case Verdict::Forged: return "forged";
  case Verdict::Incorrect: return "incorrect";
  case Verdict::Unfinished: return "unfinished";
  case Verdict::Stopped: return "stopped";
  case Verdict::Invalid: return "invalid";
  }
  return "";
}

int exitCodeOf(Verdict v) {
  switch (v) {
  case Verdict::Correct: return kExitOk;
  case Verdict::Stopped: return kExitLimit;
  case Verdict::Invalid: return kExitUsage;
  case Verdict::Forged:
  case Verdict::Incorrect:
  case Verdict::Unfinished: return kExitCheckFailed;
  }
  return kExitInternal;
}

std::string formatText(const CheckResult &r) {
  std::string s = std::string(verdictLine(r.verdict)) + "\n";
  if (!r.report)
    return s;
  const Report &rep = *r.report;
  // In seconds and bytes (the hardware model): its own lines, no puzzle units.
  if (!r.hardware) {
    // The trailing space after the timesteps is the original's.
    s += "Timesteps: " + rep.timesteps.str() + " \n";
    s += "Maximum Memory: " + rep.maxMemory.str() + " at GPU: " + std::to_string(rep.maxMemoryRank) +
         " time: " + rep.maxMemoryTime.str() + "\n";
  }
  // Bytes: asked for on the command line, or a real backend ran (and measured them).
  if (!r.hardware && (r.bytes.given || !r.measuredPeak.empty()))
    s += "Maximum Bytes: " + bytesText(rep.maxBytes) + " at GPU: " + std::to_string(rep.maxBytesRank) + " (" +
         r.bytes.describe() + ")\n";
  if (!r.measuredPeak.empty()) {
    size_t top = 0;
    for (size_t i = 1; i < r.measuredPeak.size(); ++i)
      if (r.measuredPeak[i] > r.measuredPeak[top])
        top = i;
    if (r.hardware) // beside the prediction's, in the same unit
      s += "Measured peak memory: " + gibibytes(static_cast<double>(r.measuredPeak[top])) + " (" +
           std::to_string(r.measuredPeak[top]) + " bytes) on rank " + std::to_string(top) + " (" + r.backend +
           " backend)\n";
    else
      s += "Measured Maximum Bytes: " + bytesText(static_cast<double>(r.measuredPeak[top])) +
           " at GPU: " + std::to_string(top) + " (" + r.backend + " backend)\n";
  }
  if (!r.measuredPeak.empty() || (!r.hardware && r.bytes.given))
    s += tierLines(r, rep);
  if (r.hardware)
    s += hardwareLines(r, rep);
  if (r.measuredSeconds) {
    char line[128];
    std::snprintf(line, sizeof line, "Measured step time: %.4g s (%s backend)\n", *r.measuredSeconds,
                  r.backend.c_str());
    s += line;
  }
  if (!r.reading.empty())
    s += "Read as: " + r.reading + "\n";
  if (r.targetSteps)
    s += "Target steps " + std::to_string(*r.targetSteps) + ": " +
         (met(rep.timesteps, *r.targetSteps) ? "met" : "missed") + " (Timesteps " + rep.timesteps.str() + ")\n";
  if (r.targetMemory)
    s += "Target memory " + std::to_string(*r.targetMemory) + ": " +
         (met(rep.maxMemory, *r.targetMemory) ? "met" : "missed") + " (Maximum Memory " + rep.maxMemory.str() + ")\n";
  return s;
}

std::string formatJson(const CheckResult &r, const std::vector<Diagnostic> &diagnostics, const SourceManager &sources) {
  std::string s = "{\n  \"schema\": \"schedc-check/1\",\n";
  s += "  \"schedule\": " + jsonString(r.schedule) + ",\n";
  s += "  \"file\": " + jsonString(r.file) + ",\n";
  if (!r.reading.empty())
    s += "  \"reading\": " + jsonString(r.reading) + ",\n";
  s += "  \"parameters\": {";
  for (size_t i = 0; i < r.parameters.size(); ++i)
    s += (i ? ", " : "") + jsonString(r.parameters[i].first) + ": " + std::to_string(r.parameters[i].second);
  s += "},\n";
  s += "  \"ranks\": " + std::to_string(r.model.ranks) + ",\n";
  s += "  \"backend\": " + jsonString(r.backend) + ",\n";
  s += "  \"verdict\": " + jsonString(verdictName(r.verdict)) + ",\n";
  s += std::string("  \"correct\": ") + (r.verdict == Verdict::Correct ? "true" : "false") + ",\n";
  s += std::string("  \"memory_model\": {") +
       (r.bytes.transformer
            ? "\"model\": " + jsonString(r.bytes.transformer->name)
            : "\"hidden\": " + std::to_string(r.bytes.hidden) + ", \"tokens\": " + std::to_string(r.bytes.tokens)) +
       ", \"precision\": " + jsonString(precisionName(r.bytes.precision)) +
       ", \"gradient_precision\": " + jsonString(r.bytes.bf16Gradients() ? "bf16" : "fp32") +
       ", \"optimizer_states\": " + std::to_string(r.bytes.optimizerStates) + "},\n";
  if (r.report) {
    const Report &rep = *r.report;
    if (r.hardware)
      s += hardwareJson(r, rep);
    if (r.measuredSeconds)
      s += "  \"measured_step_seconds\": " + num(*r.measuredSeconds) + ",\n";
    s += "  \"timesteps\": " + rep.timesteps.str() + ",\n";
    s += "  \"makespan\": " + rep.makespan.str() + ",\n";
    s += "  \"max_memory\": " + rep.maxMemory.str() + ",\n";
    s += "  \"max_memory_rank\": " + std::to_string(rep.maxMemoryRank) + ",\n";
    s += "  \"max_memory_time\": " + rep.maxMemoryTime.str() + ",\n";
    s += "  \"max_bytes\": " + integral(rep.maxBytes) + ",\n";
    s += "  \"max_bytes_rank\": " + std::to_string(rep.maxBytesRank) + ",\n";
    s += "  \"events\": " + std::to_string(rep.events) + ",\n";
    s += "  \"bubble_fraction\": " + num(rep.bubble) + ",\n";
    s += "  \"communication_volume\": " + num(rep.communicationVolume) + ",\n";
    s += "  \"per_rank\": [";
    for (size_t i = 0; i < rep.ranks.size(); ++i) {
      const RankFigures &f = rep.ranks[i];
      s += std::string(i ? ",\n    " : "\n    ") + "{\"rank\": " + std::to_string(f.rank) +
           ", \"events\": " + std::to_string(f.events) + ", \"last_event_start\": " + f.lastStart.str() +
           ", \"end_time\": " + f.end.str() + ", \"peak_memory\": " + f.peakMemory.str() +
           ", \"peak_memory_time\": " + f.peakTime.str() + ", \"compute_time\": " + num(f.computeTime) +
           ", \"communication_volume\": " + num(f.communicationVolume) +
           ", \"peak_micro_batches_in_flight\": " + std::to_string(f.peakInFlight) +
           ", \"peak_activation_memory\": " + std::to_string(f.peakActivationMemory) +
           ", \"peak_bytes\": " + integral(f.peakBytes) +
           (i < r.measuredPeak.size() ? ", \"measured_peak_bytes\": " + std::to_string(r.measuredPeak[i]) : "") +
           ", \"peak_host_bytes\": " + integral(f.peakHostBytes) +
           ", \"peak_nvme_bytes\": " + integral(f.peakNvmeBytes) +
           (i < r.measuredHostPeak.size()
                ? ", \"measured_peak_host_bytes\": " + std::to_string(r.measuredHostPeak[i]) +
                      ", \"measured_peak_nvme_bytes\": " + std::to_string(r.measuredNvmePeak[i])
                : "") +
           "}";
    }
    s += rep.ranks.empty() ? "],\n" : "\n  ],\n";
  } else {
    for (const char *field : {"timesteps", "makespan", "max_memory", "max_memory_rank", "max_memory_time", "max_bytes",
                              "max_bytes_rank", "events", "bubble_fraction", "communication_volume"})
      s += std::string("  \"") + field + "\": null,\n";
    s += "  \"per_rank\": [],\n";
  }
  s += "  \"targets\": {";
  bool comma = false;
  if (r.targetSteps) {
    s += "\"steps\": " + std::to_string(*r.targetSteps);
    if (r.report)
      s += std::string(", \"steps_met\": ") + (met(r.report->timesteps, *r.targetSteps) ? "true" : "false");
    comma = true;
  }
  if (r.targetMemory) {
    s += std::string(comma ? ", " : "") + "\"memory\": " + std::to_string(*r.targetMemory);
    if (r.report)
      s += std::string(", \"memory_met\": ") + (met(r.report->maxMemory, *r.targetMemory) ? "true" : "false");
  }
  s += "},\n  \"diagnostics\": [";
  for (size_t i = 0; i < diagnostics.size(); ++i)
    s += std::string(i ? ",\n    " : "\n    ") + diagnostic(diagnostics[i], sources);
  s += diagnostics.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return s;
}

} // namespace schedc::sim
