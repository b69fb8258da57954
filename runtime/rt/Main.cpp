// Main — schedc_main, the `main` of every compiled schedule, and runProgram, which `schedc
// run` calls directly. Rebuilds the sources and locations from the program description,
// reads -D and the run options, evaluates the parameters with the compiled defaults, and
// runs every rank of the compiled entry through sim::runAndReport — the same path `schedc
// check` takes — so the report and diagnostics are byte for byte the same.
#include "rt/ComputeRun.h"
#include "rt/Program.h"
#include "sim/ReportFormat.h"

#include "backend/WeightsDir.h"
#include "options/OptionValues.h"
#include "sim/Budget.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mpi.h>
#include <sstream>

namespace schedc::rt {

namespace {

const char *kUsage = R"(usage: %s [options]

A schedule compiled by schedc. Runs one training step of it and prints the report.

  --backend=sim        run on the simulated backend (the puzzle cost model; the default)
  --backend=cpu        compute for real, one MPI process per rank:
                         mpirun -np RANKS ./prog --backend=cpu
  --backend=cuda       compute on GPUs (cuBLAS, NCCL), one MPI process per GPU:
                         mpirun -np RANKS ./prog --backend=cuda

The model (cpu and cuda compute it; on every backend the report predicts each rank's peak
bytes of it, and cpu and cuda measure them):
%s  --seed=N             cpu/cuda: the seed of inputs, targets and initial weights (default 1)
  --tf32               cuda, fp32: GEMMs on TF32 tensor cores (fp32 storage)
  --no-overlap         cuda: collectives on the compute stream, not overlapping it

  --weights-out=DIR    cpu/cuda: write the final weights to DIR/layer_<l>.npy (H x H float32);
                       DIR must not exist
  --overwrite-weights  cpu/cuda: DIR may be weights a previous run wrote; they are replaced
  --no-verify          cpu/cuda: run even a schedule that check rejects
  --stats              cpu/cuda: print each rank's GEMM rate, MPI time and the library's own rate
  -D NAME=VALUE        override a schedule parameter (repeatable)
  --format=text|json   the report's format (default text)
  --events=FILE        write every event as CSV
  --trace=FILE         write a Chrome trace of the run (open it in Perfetto)
  --draw=FILE          draw the run's timeline (SVG, or HTML when FILE ends in .html);
                       on the cpu and cuda backends both show measured times and memory
%s  --help               this text

Exit codes: 0 correct, 1 not a correct training step, 2 bad command line or parameters,
4 a file could not be written, 5 no usable GPU for --backend=cuda, 6 a resource limit
stopped the run, 70 internal error.
)";

} // namespace

int runProgram(const schedc_program &program, const std::vector<std::string> &defines, const sim::RunOptions &options,
               std::ostream &out, std::ostream &err, const ComputeRun *computeRun) {
  std::unique_ptr<backend::Comm> comm = computeRun ? std::make_unique<backend::Comm>() : nullptr;
  std::ostringstream discard; // what ranks other than 0 would print (rank 0 says it)
  bool root = !comm || comm->rank() == 0;
  Streams streams{root ? out : discard, root ? err : discard, err};
  if (program.abi_version != SCHEDC_ABI_VERSION) {
    streams.err << "schedc: error: this program was compiled for runtime ABI " << program.abi_version
                << ", but the runtime is ABI " << SCHEDC_ABI_VERSION << "; rebuild it\n";
    return kExitInternal;
  }
  Decoded decoded(program);
  DiagnosticEngine diags(decoded.sources, options.json ? nullptr : &streams.err);
  std::optional<std::map<std::string, int64_t>> overrides = sim::resolveDefines(decoded.setup, defines, diags);
  if (!overrides) {
    if (options.json)
      streams.out << sim::invalidJson(decoded.setup.schedule, decoded.setup.file, diags, decoded.sources);
    return kExitUsage;
  }
  std::optional<std::vector<int64_t>> evaluated = decoded.evaluate(*overrides, diags);
  if (!computeRun)
    return sim::runAndReport(decoded.setup, evaluated, options, decoded.body(nullptr), decoded.sources, diags,
                             streams.out);
  return computeForReal(decoded, evaluated, options, *computeRun, *comm, diags, streams);
}

} // namespace schedc::rt

extern "C" int schedc_main(const schedc_program *program, int argc, char **argv) {
  namespace rt = schedc::rt;
  std::vector<std::string> defines;
  schedc::sim::RunOptions options;
  rt::ComputeRun run;
  bool computing = false;
  schedc::sim::installOutOfMemoryHandler();
  // Under mpirun, say which rank failed (the options are read before MPI starts).
  auto fail = [&](const std::string &message, int code) {
    const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
      rank = std::getenv("PMI_RANK");
    std::cerr << "schedc: error: " << (rank ? "rank " + std::string(rank) + ": " : "") << message << "\n";
    return code;
  };
  auto usage = [&](const std::string &message) {
    return fail(message + " (see " + argv[0] + " --help)", schedc::kExitUsage);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> std::optional<std::string> {
      std::string f = flag;
      if (a.compare(0, f.size() + 1, f + "=") == 0)
        return a.substr(f.size() + 1);
      if (a == f && i + 1 < argc)
        return std::string(argv[++i]);
      return std::nullopt;
    };
    // Reads `flag`'s value with `parse` (a shared parser of the model's or the limits'
    // options): "" or what is wrong.
    auto parseValue = [&](const std::string &flag, const auto &parse) {
      std::optional<std::string> v = value(flag.c_str());
      std::string error = v ? "" : "option `" + flag + "` needs a value";
      if (v)
        parse(*v, error);
      return error;
    };
    if (a == "--help" || a == "-h") {
      std::printf(rt::kUsage, argv[0], schedc::sim::kByteModelHelp, schedc::sim::kLimitsHelp);
      return schedc::kExitOk;
    } else if (a.size() > 2 && a.compare(0, 2, "-D") == 0) {
      defines.push_back(a.substr(2));
    } else if (a == "-D" && i + 1 < argc) {
      defines.push_back(argv[++i]);
    } else if (auto v = value("--backend")) {
      if (*v != "sim" && *v != "cpu" && (*v != "cuda" || !rt::haveCuda()))
        return usage("backend `" + *v + "` is not available in this program (available: sim, cpu" +
                     (rt::haveCuda() ? ", cuda" : "") + ")" +
                     (*v == "cuda" ? "; build it with `schedc build --cuda` for the cuda backend" : ""));
      computing = *v != "sim";
      run.backend = *v == "cuda" ? rt::ComputeRun::Cuda : rt::ComputeRun::Cpu;
    } else if (a == "--tf32") {
      run.config.tf32 = true;
    } else if (a == "--no-overlap") {
      run.config.overlap = false;
    } else if (std::string flag = schedc::sim::byteModelFlag(a); !flag.empty()) {
      std::string error = parseValue(flag, [&](const std::string &v, std::string &e) {
        schedc::sim::parseByteModelOption(flag, v, options.bytes, e);
      });
      if (!error.empty())
        return usage(error);
    } else if (auto v = value("--seed")) {
      if (!schedc::parseWholeNumber(*v, 0, UINT64_MAX, run.config.dims.seed))
        return usage("--seed needs a whole number from 0 to 18446744073709551615");
    } else if (auto v = value("--weights-out")) {
      if (v->empty())
        return usage("--weights-out needs a directory");
      run.weightsOut = *v;
    } else if (a == "--overwrite-weights") {
      run.overwriteWeights = true;
    } else if (a == "--no-verify") {
      run.noVerify = true;
    } else if (a == "--stats") {
      run.stats = true;
    } else if (auto v = value("--format")) {
      if (*v != "text" && *v != "json")
        return usage("unknown --format `" + *v + "` (expected text or json)");
      options.json = *v == "json";
    } else if (auto v = value("--events")) {
      options.eventsFile = *v;
    } else if (auto v = value("--trace")) {
      options.traceFile = *v;
    } else if (auto v = value("--draw")) {
      options.timelineFile = *v;
      options.timelineHtml = v->size() > 5 && v->compare(v->size() - 5, 5, ".html") == 0;
    } else if (std::string flag = schedc::sim::limitFlag(a); !flag.empty()) {
      std::string error = parseValue(flag, [&](const std::string &v, std::string &e) {
        schedc::sim::parseLimitOption(flag, v, options.limits, e);
      });
      if (!error.empty())
        return usage(error);
    } else {
      return usage("unknown option `" + a + "`");
    }
  }
  if (!run.weightsOut.empty() && !computing)
    return usage("--weights-out is an option of the cpu and cuda backends (they compute the weights)");
  if (!run.weightsOut.empty()) // refused before the run, not after it
    if (std::string problem = schedc::backend::checkWeightsDestination(run.weightsOut, run.overwriteWeights);
        !problem.empty())
      return fail(problem, schedc::kExitIoError);
  // The model the report predicts bytes for is the one a real backend computes.
  if (run.config.tf32 && options.bytes.precision == schedc::sim::Precision::Bf16)
    return usage("--tf32 is for fp32 GEMMs; with --precision=bf16 the GEMMs are bf16");
  if ((run.config.tf32 || !run.config.overlap) && run.backend != rt::ComputeRun::Cuda)
    return usage(std::string(run.config.tf32 ? "--tf32" : "--no-overlap") +
                 " is an option of the cuda backend (--backend=cuda)");
  run.config.dims.hidden = options.bytes.hidden;
  run.config.dims.tokens = options.bytes.tokens;
  run.config.precision = options.bytes.precision;
  bool adam = options.bytes.optimizerStates == 2;
  run.config.optimizer.kind = adam ? schedc::backend::Optimizer::Adam : schedc::backend::Optimizer::Sgd;
  run.config.optimizer.lr = adam ? 1e-3f : 0.1f; // each optimizer's usual step size
  if (!computing) {
    try {
      return rt::runProgram(*program, defines, options, std::cout, std::cerr);
    } catch (const std::exception &e) {
      std::cerr << "schedc: internal error: " << e.what() << "\n";
      return schedc::kExitInternal;
    }
  }
  MPI_Init(&argc, &argv);
  int code = schedc::kExitInternal;
  try {
    code = rt::runProgram(*program, defines, options, std::cout, std::cerr, &run);
  } catch (const std::exception &e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cerr << "schedc: internal error: rank " << rank << ": " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, schedc::kExitInternal);
  }
  MPI_Finalize();
  return code;
}
