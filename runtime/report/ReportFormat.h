// ReportFormat — how the result of a simulated run is shown: the text the original puzzle
// library prints (`Correct!`, `Timesteps: 16.5 `, `Maximum Memory: ... at GPU: 0 time: 8`)
// plus the puzzle targets, or the `--format=json` document (schema `schedc-check/1`,
// documented in docs/checks.md). `schedc check` and compiled programs both print through
// here, so their output is byte-identical.
#pragma once

#include "cost/HardwareCost.h"
#include "diagnostics/Diagnostics.h"
#include "engine/World.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace schedc::sim {

enum class Verdict {
  Correct,    // a complete, correct training step
  Forged,     // correct only thanks to gradients made up with fake_grad
  Incorrect,  // ran to its end with errors
  Unfinished, // could not run to its end (deadlock, a fatal error)
  Stopped,    // a resource limit stopped the run (--max-steps, --time-limit, --memory-limit)
  Invalid,    // never ran: the source or the parameters have errors
};

struct CheckResult {
  std::string schedule;
  std::string file;
  std::string reading; // an imported file's: how its actions were read (the report's "Read as")
  std::vector<std::pair<std::string, int64_t>> parameters;
  Model model;
  Verdict verdict = Verdict::Unfinished;
  std::optional<Report> report; // absent when the run did not complete
  std::optional<int64_t> targetSteps, targetMemory;
  // The model whose bytes are predicted (ranks' peak bytes are in the report).
  ByteModel bytes;
  // The hardware cost model, when it timed the run: the report adds step seconds, MFU and
  // whether each rank fits in its accelerator's memory.
  const cost::HardwareCost *hardware = nullptr;
  // A backend with real data (cpu, cuda): its name, and the bytes of data each rank held at
  // its peak, measured at the same events as the cost model samples.
  std::string backend = "sim";
  std::vector<int64_t> measuredPeak;
  // The same in host memory and on NVMe (beside each rank's predicted peaks there).
  std::vector<int64_t> measuredHostPeak, measuredNvmePeak;
  // And the step's wall clock there, start-up and verification excluded (seconds).
  std::optional<double> measuredSeconds;
};

// The hardware cost model's figures of a finished run (r.hardware set): the step (the end
// of its last event) in seconds, model and hardware FLOP utilisation (FLOPs / (step x
// ranks x peak)), tokens per second per accelerator (0 without a transformer: the step's
// micro-batches are its model FLOPs over one micro-batch's through every layer), an
// accelerator's memory, the runtime's share of it, and the ranks whose peak bytes and that
// overhead exceed it.
struct HardwareFigures {
  double seconds = 0, mfu = 0, hfu = 0, tokensPerSecond = 0, capacity = 0, overhead = 0;
  std::vector<int64_t> over; // the ranks whose device memory is too small
  // Host memory and NVMe (memory tiers) are a node's, shared by its ranks: each rank's peak
  // summed over the node (an upper bound on the node's peak: the ranks' peaks need not
  // coincide), the fullest node's against the node's capacity (0: the machine gives none).
  struct NodeTier {
    double peak = 0;  // the fullest node's bytes
    int64_t node = 0; // that node
    double capacity = 0;
    // Unknown (no capacity given) counts as fitting: JSON says null, the text "unknown".
    bool known() const { return capacity > 0 || peak == 0; }
    bool fits() const { return !known() || peak <= capacity; }
  };
  NodeTier host, nvme;
  bool fits() const { return over.empty() && host.fits() && nvme.fits(); }
};
HardwareFigures hardwareFigures(const CheckResult &r, const Report &rep);

Verdict verdictOf(const World &w);
// The verdict as JSON and `compare` print it: "correct", "forged", ...
const char *verdictName(Verdict v);
// The exit code of a run with this verdict (docs/checks.md): 0 correct, 6 stopped at a
// limit, 1 otherwise (an invalid run never starts: the parameters' problem, exit 2).
int exitCodeOf(Verdict v);
std::string formatText(const CheckResult &r);
// JSON texts as the reports write them: a string quoted and escaped; a number as the
// shortest text that reads back the same (Python's repr).
std::string jsonString(const std::string &s);
std::string jsonNumber(double v);
std::string formatJson(const CheckResult &r, const std::vector<Diagnostic> &diagnostics, const SourceManager &sources);

} // namespace schedc::sim
