// CommandLine implementation: one reader per group of options (the backend's, the report's,
// and those shared with schedc), then the checks that look at the line as a whole, then the
// real backends' model taken from the byte model the report predicts for.
#include "rt/CommandLine.h"

#include "backend/WeightsDir.h"
#include "cost/HardwareCost.h"
#include "diagnostics/Diagnostics.h"
#include "diagnostics/SourceManager.h"
#include "options/OptionValues.h"
#include "run/CostChoice.h"
#include "run/SharedOptions.h"

namespace schedc::rt {

namespace {

// --backend and the real backends' options. Whether `args`' current argument is one of them;
// a bad value sets `error`.
bool readBackendOption(ArgumentList &args, CommandLine &line, std::string &error) {
  const std::string &a = args.current();
  ComputeRun &run = line.run;
  std::string v;
  if (args.value("--backend", v)) {
    if (v != "sim" && v != "cpu" && (v != "cuda" || !haveCuda()))
      error = "backend `" + v + "` is not available in this program (available: sim, cpu" +
              (haveCuda() ? ", cuda" : "") + ")" +
              (v == "cuda" ? "; build it with `schedc build --cuda` for the cuda backend" : "");
    line.computing = v != "sim";
    run.backend = v == "cuda" ? ComputeRun::Cuda : ComputeRun::Cpu;
  } else if (args.value("--seed", v)) {
    if (!parseWholeNumber(v, 0, UINT64_MAX, run.config.dims.seed))
      error = "--seed needs a whole number from 0 to 18446744073709551615";
  } else if (args.value("--weights-out", v)) {
    if (v.empty())
      error = "--weights-out needs a directory";
    run.weightsOut = v;
  } else if (a == "--tf32") {
    line.tf32Flag = true;
    line.options.bytes.tf32 = true;
  } else if (a == "--no-overlap") {
    run.config.overlap = false;
  } else if (a == "--overwrite-weights") {
    run.overwriteWeights = true;
  } else if (a == "--no-verify") {
    run.noVerify = true;
  } else if (a == "--stats") {
    run.stats = true;
  } else if (args.value("--calibrate", v)) {
    if (v.empty())
      error = "--calibrate needs a file";
    line.calibrate = v;
  } else {
    return false;
  }
  return true;
}

// The report's options (--format, --draw; -D, --events and --trace are shared).
bool readReportOption(ArgumentList &args, CommandLine &line, std::string &error) {
  sim::RunOptions &options = line.options;
  std::string v;
  if (args.value("--format", v)) {
    if (v != "text" && v != "json")
      error = "unknown --format `" + v + "` (expected text or json)";
    options.json = v == "json";
  } else if (args.value("--draw", v)) {
    options.timelineFile = v;
    options.timelineHtml = v.size() > 5 && v.compare(v.size() - 5, 5, ".html") == 0;
  } else {
    return false;
  }
  return true;
}

// What is wrong with options that are each right alone ("" if nothing).
std::string checkTogether(const CommandLine &line) {
  const ComputeRun &run = line.run;
  if (!run.weightsOut.empty() && !line.computing)
    return "--weights-out is an option of the cpu and cuda backends (they compute the weights)";
  if (!line.calibrate.empty() && !line.computing)
    return "--calibrate measures the cpu backend (run it with --backend=cpu under mpirun, -np 2 or more for MPI) or "
           "the cuda backend's GPU (--backend=cuda)";
  if (std::string wrong = sim::checkCostOptions(line.options); !wrong.empty())
    return wrong;
  if (!line.options.model.empty() && line.computing)
    return "--model times a transformer on the sim backend; the cpu and cuda backends compute (and time) the "
           "tanh(xW1)W2 layers of --hidden and --tokens";
  // The model the report predicts bytes for is the one a real backend computes: TF32 is a
  // GPU's (the sim backend only predicts its time).
  if (line.tf32Flag && line.options.bytes.precision == sim::Precision::Bf16)
    return "--tf32 is for fp32 GEMMs; with --precision=bf16 the GEMMs are bf16";
  if (line.options.bytes.tf32 && line.computing && run.backend != ComputeRun::Cuda)
    return "TF32 GEMMs (--precision=tf32, --tf32) are the cuda backend's; the cpu backend computes in fp32";
  if (!run.config.overlap && run.backend != ComputeRun::Cuda)
    return "--no-overlap is an option of the cuda backend (--backend=cuda)";
  return {};
}

// The real backends compute the model the report predicts bytes for.
void configureModel(CommandLine &line) {
  const sim::ByteModel &bytes = line.options.bytes;
  backend::ComputeConfig &config = line.run.config;
  config.dims.hidden = bytes.hidden;
  config.dims.tokens = bytes.tokens;
  config.dims.experts = bytes.experts;
  config.dims.topK = bytes.topK;
  config.precision = bytes.precision;
  config.fp32Gradients = bytes.fp32Gradients;
  config.tf32 = bytes.tf32;
  bool adam = bytes.optimizerStates == 2;
  config.optimizer.kind = adam ? backend::Optimizer::Adam : backend::Optimizer::Sgd;
  config.optimizer.lr = adam ? 1e-3f : 0.1f; // each optimizer's usual step size
}

// A description file, for the cost model's resolver: read as schedc reads one (a directory,
// a FIFO without a writer and the like refused with the same words).
std::optional<std::string> readText(const std::string &path, std::string &error) {
  SourceManager files;
  std::optional<uint32_t> file = files.load(path, error);
  if (!file)
    return std::nullopt;
  return std::string(files.text(*file));
}

} // namespace

std::optional<CommandLine> readCommandLine(const std::vector<std::string> &argv, Refusal &refusal) {
  CommandLine line;
  ArgumentList args(argv);
  std::string error = sim::defaultThreads(line.options.threads);
  while (!args.done() && error.empty() && args.error().empty()) {
    const std::string &a = args.take();
    if (a == "--help" || a == "-h") {
      line.help = true;
      return line;
    }
    if (!readBackendOption(args, line, error) && !readReportOption(args, line, error) &&
        sim::readSharedOption(args, line.options, error).empty())
      error = "unknown option `" + a + "`";
  }
  if (!args.error().empty()) // a flag last on the line, whose reader saw an empty value
    error = args.error();
  else if (error.empty())
    error = checkTogether(line);
  if (!error.empty()) {
    refusal = {error, kExitUsage};
    return std::nullopt;
  }
  if (!line.run.weightsOut.empty()) // refused before the run, not after it
    if (std::string problem = backend::checkWeightsDestination(line.run.weightsOut, line.run.overwriteWeights);
        !problem.empty()) {
      refusal = {problem, kExitIoError};
      return std::nullopt;
    }
  configureModel(line);
  if (sim::DescriptionProblem problem; !sim::resolveCostModel(line.options, readText, problem)) {
    refusal = {problem.located(), problem.exitCode};
    return std::nullopt;
  }
  return line;
}

std::string helpText(const std::string &program) {
  return "usage: " + program + R"( [options]

A schedule compiled by schedc. Runs one training step of it and prints the report.

  --backend=sim        run on the simulated backend (the puzzle cost model; the default)
  --backend=cpu        compute for real, one MPI process per rank:
                         mpirun -np RANKS ./prog --backend=cpu
  --backend=cuda       compute on GPUs (cuBLAS, NCCL), one MPI process per GPU:
                         mpirun -np RANKS ./prog --backend=cuda

The model (cpu and cuda compute it; on every backend the report predicts each rank's peak
bytes of it, and cpu and cuda measure them):
)" + sim::kByteModelHelp +
         R"(  --seed=N             cpu/cuda: the seed of inputs, targets and initial weights (default 1)
  --tf32               --precision=tf32: cuda's GEMMs on TF32 tensor cores (fp32 storage)
  --no-overlap         cuda: collectives on the compute stream, not overlapping it

  --weights-out=DIR    cpu/cuda: write the final weights to DIR/layer_<l>.npy (H x H float32);
                       DIR must not exist
  --overwrite-weights  cpu/cuda: DIR may be weights a previous run wrote; they are replaced
  --no-verify          cpu/cuda: run even a schedule that check rejects
  --stats              cpu/cuda: print each rank's GEMM rate, MPI time and the library's own rate
  --calibrate=FILE     cpu: measure this machine (GEMM rate at --hidden and --tokens, memory
                       bandwidth, MPI latency and bandwidth) into a hardware file, and stop:
                         mpirun -np 2 ./prog --backend=cpu --calibrate=cpu.toml
                       cuda: this GPU's cuBLAS GEMMs over m, n, k in 256 .. 8192, memory
                       bandwidth and the CUDA context's memory (./prog --backend=cuda --calibrate=gpu.toml)

How the step is timed (--hardware: in seconds on a machine; the cpu and cuda backends print
the measured step time beside the prediction of their own layers):
)" + sim::kCostModelHelp +
         R"(
  -D NAME=VALUE        override a schedule parameter (repeatable)
  --format=text|json   the report's format (default text)
  --events=FILE        write every event as CSV
  --trace=FILE         write a Chrome trace of the run (open it in Perfetto)
  --draw=FILE          draw the run's timeline (SVG, or HTML when FILE ends in .html);
                       on the cpu and cuda backends both show measured times and memory
)" + sim::kWarningsHelp +
         sim::kLimitsHelp +
         R"(  --help               this text

Exit codes: 0 correct, 1 not a correct training step, 2 bad command line or parameters,
3 a model or hardware file is not valid, 4 a file could not be read or written, 5 no
usable GPU for --backend=cuda, 6 a resource limit stopped the run, 70 internal error.
)";
}

} // namespace schedc::rt
