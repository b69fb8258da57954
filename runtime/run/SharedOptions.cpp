// SharedOptions implementation: the flag is recognised first (so `--hidden` last on the line
// is a missing value, not an unknown option), then its value is parsed by its owner.
#include "run/SharedOptions.h"

#include "options/OptionValues.h"

#include <cstdlib>
#include <sstream>

namespace schedc::sim {

const char *const kWarningsHelp =
    R"(  --no-warn=CODE,...   leave these end-of-step warnings unsaid, where the schedule means
                       it: leftover (activations or gradients still held), unreceived
                       (messages never received)
  --overlap=SHARE      the share (0 to 1) of the shorter side of each `overlap` pair that
                       the pair hides, as measured on the device (DualPipe's F&B = the
                       longer side + (1 - SHARE) x the shorter); default 0: no overlap
                       claimed, the pair takes the sum of its sides
  --threads=N|auto     run the ranks on N threads (1 to 256; the sim backend's runs only).
                       The default, auto (or the environment's SCHEDC_THREADS), takes one
                       a processor where a run has 64 ranks or more for each (one where
                       `ulimit -v` bounds the address space). Every figure and message is
                       the same on any number: a run that meets an error or a warning on
                       the way is made again on one thread, which reports it
                       (docs/checks.md#threads)
  --p2p=ordered|tagged how sends and receives meet: ordered, as PyTorch's pipelining does
                       over NCCL (per pair of ranks in the order they were sent, each
                       rank's operations in the order it issued them); tagged, by tag. Default:
                       the schedule's `@p2p`, ordered for a PyTorch file, else tagged
                       (docs/pytorch.md#point-to-point)
)";

const char *const kCostModelHelp =
    R"(  --cost-model=NAME    puzzle (default: the puzzles' exact model), compute-only
                       (communication takes no time), equal-phases (forward, B and W
                       one step each, communication free: the zero-bubble papers' times)
                       or hardware (seconds of --model on --hardware, communication
                       overlapping compute; docs/costs.md)
  --model=NAME|FILE    the hardware model's transformer: a preset (gpt3-175b, llama3-8b,
                       llama3-70b, llama3-405b, megatron-22b/175b/530b/1t, mixtral-8x7b,
                       deepseek-v3), a TOML file or a Hugging Face config.json;
                       without it, the real backends' tanh(xW1)W2 layer of --hidden, --tokens
  --hardware=NAME|FILE the machine: a preset (dgx-h100, dgx-a100-80gb) or a TOML file
  --model-set=KEY=VALUE, --hardware-set=KEY=VALUE  override one key (repeatable)
)";

namespace {

// --no-warn's value: codes separated by commas.
void parseSilenced(const std::string &value, SilencedWarnings &silenced, std::string &error) {
  std::stringstream codes(value + ",");
  for (std::string code; error.empty() && std::getline(codes, code, ',');) {
    if (code == "leftover" || code == "unreceived")
      (code == "leftover" ? silenced.leftover : silenced.unreceived) = true;
    else
      error = "--no-warn takes leftover or unreceived (separated by commas), not `" + code + "`";
  }
}

// --overlap's value: a share from 0 to 1.
void parseOverlap(const std::string &value, double &hidden, std::string &error) {
  if (!parseDecimal(value, 0, 1, hidden))
    error = "--overlap takes the share of a pair's shorter side it hides, from 0 to 1, not `" + value + "`";
}

// --threads's value (or SCHEDC_THREADS's: `from` says which): a number of threads, or auto.
void parseThreads(const std::string &value, const char *from, unsigned &threads, std::string &error) {
  uint64_t n = 0;
  if (value == "auto")
    threads = kAutoThreads;
  else if (parseWholeNumber(value, 1, kMaxThreads, n))
    threads = static_cast<unsigned>(n);
  else
    error = std::string(from) + " takes a number of threads from 1 to " + std::to_string(kMaxThreads) +
            ", or auto, not `" + value + "`";
}

} // namespace

std::string defaultThreads(unsigned &threads) {
  threads = kAutoThreads;
  std::string error;
  if (const char *value = std::getenv("SCHEDC_THREADS"))
    parseThreads(value, "SCHEDC_THREADS", threads, error);
  return error;
}

std::string readSharedOption(ArgumentList &args, SharedOptions &o, std::string &error) {
  std::string value;
  if (args.current().rfind("--p2p", 0) == 0 && args.value("--p2p", value)) {
    if (error.empty() && args.error().empty() && !(o.p2p = parsePointToPoint(value)))
      error = "--p2p takes ordered (sends and receives meet as PyTorch's over NCCL do) or tagged, not `" + value + "`";
    return "--p2p";
  }
  if (args.current().rfind("--threads", 0) == 0 && args.value("--threads", value)) {
    if (error.empty() && args.error().empty())
      parseThreads(value, "--threads", o.threads, error);
    return "--threads";
  }
  if (args.current().rfind("--overlap", 0) == 0 && args.value("--overlap", value)) {
    if (error.empty() && args.error().empty())
      parseOverlap(value, o.overlapHidden, error);
    return "--overlap";
  }
  if (args.current().rfind("--no-warn", 0) == 0 && args.value("--no-warn", value)) {
    if (error.empty() && args.error().empty())
      parseSilenced(value, o.silenced, error);
    return "--no-warn";
  }
  if (std::string flag = byteModelFlag(args.current()); !flag.empty() && args.value(flag, value)) {
    if (error.empty() && args.error().empty())
      parseByteModelOption(flag, value, o.bytes, error);
    return flag;
  }
  if (std::string flag = limitFlag(args.current()); !flag.empty() && args.value(flag, value)) {
    if (error.empty() && args.error().empty())
      parseLimitOption(flag, value, o.limits, error);
    return flag;
  }
  if (args.value("-D", value)) {
    o.defines.push_back(value);
    return "-D";
  }
  if (args.value("--events", value)) {
    o.eventsFile = value;
    return "--events";
  }
  if (args.value("--trace", value)) {
    o.traceFile = value;
    return "--trace";
  }
  if (args.value("--cost-model", value)) {
    if (const cost::CostModel *model = cost::findCostModel(value))
      o.costModel = model;
    else if (value == "hardware")
      o.hardwareCost = true;
    else if (error.empty())
      error = "unknown cost model `" + value + "` (available: " + cost::costModelNames() + ", hardware)";
    return "--cost-model";
  }
  // What the hardware cost model is made of (any of them asks for it).
  if (args.value("--model", value)) {
    o.hardwareCost = true;
    o.model = value;
    return "--model";
  }
  if (args.value("--hardware", value)) {
    o.hardwareCost = true;
    o.hardware = value;
    return "--hardware";
  }
  if (args.value("--model-set", value)) {
    o.hardwareCost = true;
    o.modelSettings.push_back(value);
    return "--model-set";
  }
  if (args.value("--hardware-set", value)) {
    o.hardwareCost = true;
    o.hardwareSettings.push_back(value);
    return "--hardware-set";
  }
  return {};
}

std::string checkCostOptions(const SharedOptions &o) {
  if (!o.model.empty() && (o.bytes.experts > 0 || o.bytes.topK > 1))
    return "--experts and --top-k make the real backends' tanh(xW1)W2 layer a mixture of experts; a --model's "
           "experts and top-k are its own (--model-set=experts=N, top_k=K)";
  if (o.bytes.experts == 0 && o.bytes.topK > 1)
    return "--top-k=" + std::to_string(o.bytes.topK) +
           " needs --experts=N: without it a layer has one expert a slice of a schedule's split, one token copy each";
  if (o.bytes.experts > 0 && o.bytes.topK > o.bytes.experts)
    return "--top-k=" + std::to_string(o.bytes.topK) + " sends each token to more experts than the " +
           std::to_string(o.bytes.experts) + " of --experts";
  if (!o.hardwareCost)
    return "";
  if (o.costModel != &cost::puzzleCost())
    return "--model and --hardware set the hardware cost model; --cost-model=" + std::string(o.costModel->name()) +
           " is another";
  if (o.hardware.empty())
    return "the hardware cost model needs --hardware=NAME|FILE (a preset or a TOML file; see docs/costs.md)";
  if (o.model.empty() && !o.modelSettings.empty())
    return "--model-set changes the --model; without one the model is the tanh(xW1)W2 layer of --hidden and --tokens";
  return "";
}

} // namespace schedc::sim
