// Main — schedc_main, the `main` of every compiled schedule, and runProgram, which `schedc
// run` calls directly. Rebuilds the sources and locations from the program description,
// reads -D and the run options, evaluates the parameters with the compiled defaults, and
// runs every rank of the compiled entry through sim::runAndReport — the same path `schedc
// check` takes — so the report and diagnostics are byte for byte the same.
#include "rt/Program.h"
#include "rt/RankContext.h"
#include "sim/ReportFormat.h"
#include "sim/Timeline.h"

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
  bool root = !comm || comm->rank() == 0;
  std::ostringstream discard; // what ranks other than 0 would print (rank 0 says it)
  std::ostream &o = root ? out : discard;
  std::ostream &e = root ? err : discard;
  if (program.abi_version != SCHEDC_ABI_VERSION) {
    e << "schedc: error: this program was compiled for runtime ABI " << program.abi_version
      << ", but the runtime is ABI " << SCHEDC_ABI_VERSION << "; rebuild it\n";
    return kExitInternal;
  }
  SourceManager sources;
  for (uint32_t i = 0; i < program.num_files; ++i)
    sources.addBuffer(program.files[i].path, program.files[i].text);
  std::vector<SourceRange> locations;
  for (uint32_t i = 0; i < program.num_locations; ++i) {
    const schedc_location &l = program.locations[i];
    locations.push_back(SourceRange{{l.file + 1, l.line, l.col}, {l.file + 1, l.end_line, l.end_col}});
  }
  std::vector<std::string> axes(program.axes, program.axes + program.num_axes);

  sim::RunSetup setup;
  setup.schedule = program.schedule;
  setup.scheduleAt = SourceRange(locations[program.schedule_loc].begin);
  setup.file = sources.name(setup.scheduleAt.begin.file);
  for (uint32_t i = 0; i < program.num_params; ++i)
    setup.params.push_back(
        sim::ParamSpec{program.params[i].name, program.params[i].has_default != 0, locations[program.params[i].loc]});
  for (uint32_t i = 0; i < program.num_arrays; ++i) {
    int32_t k = program.arrays[i].kind; // an enum schedc_value_kind
    SCHEDC_ASSERT(k == SCHEDC_KIND_UNKNOWN || (k >= 0 && k < kValueKinds), "an array of no kind of value");
    setup.arrays.push_back(sim::ArrayInfo{
        program.arrays[i].name, k == SCHEDC_KIND_UNKNOWN ? std::nullopt : std::optional(static_cast<sim::Kind>(k))});
  }
  if (program.target_steps >= 0)
    setup.targetSteps = program.target_steps;
  if (program.target_memory >= 0)
    setup.targetMemory = program.target_memory;

  DiagnosticEngine diags(sources, options.json ? nullptr : &e);
  std::optional<std::map<std::string, int64_t>> overrides = sim::resolveDefines(setup, defines, diags);
  if (!overrides) {
    if (options.json)
      o << sim::invalidJson(setup.schedule, setup.file, diags, sources);
    return kExitUsage;
  }

  // The parameters: -D values where given, the compiled defaults for the rest.
  std::vector<int64_t> values(program.num_params, 0);
  std::vector<uint8_t> overridden(program.num_params, 0);
  for (uint32_t i = 0; i < program.num_params; ++i)
    if (auto it = overrides->find(program.params[i].name); it != overrides->end()) {
      values[i] = it->second;
      overridden[i] = 1;
    }
  RankContext paramContext(locations, axes);
  paramContext.paramDiags = &diags;
  program.parameters(reinterpret_cast<schedc_rank *>(&paramContext), values.data(), overridden.data());
  std::optional<std::vector<int64_t>> evaluated;
  if (!paramContext.paramsFailed)
    evaluated = values;

  std::vector<sim::Measured> measured; // the computing rank's events, in real time (cpu)
  double origin = 0;
  // Runs the compiled entry on every rank (computing data on `local`'s rank, if any).
  auto body = [&](backend::ComputeRank *local) {
    return [&, local](sim::Rank &rank) {
      RankContext context(locations, axes);
      context.rank = &rank;
      if (local && rank.id() == comm->rank()) {
        context.compute = local;
        context.measured = &measured;
        context.origin = origin;
        context.settle = !options.traceFile.empty() || !options.timelineFile.empty();
        rank.measurePayloads(true);
      }
      program.entry(reinterpret_cast<schedc_rank *>(&context), values.data());
    };
  };
  if (!computeRun)
    return sim::runAndReport(setup, evaluated, options, body(nullptr), sources, diags, o);

  // A real backend: one process per rank, a verified schedule unless --no-verify.
  int64_t ranks = 1, batches = 1, layers = 1;
  for (uint32_t i = 0; i < program.num_params && evaluated; ++i) {
    std::string name = program.params[i].name;
    (name == "ranks"     ? ranks
     : name == "batches" ? batches
     : name == "layers"  ? layers
                         : batches) = name == "ranks" || name == "batches" || name == "layers" ? values[i] : batches;
  }
  if (evaluated && ranks != comm->size()) {
    e << "schedc: error: the schedule runs on " << ranks << " ranks, but " << comm->size()
      << " processes were started (run it with mpirun -np " << ranks << ")\n";
    return kExitUsage;
  }
  if (computeRun->backend == ComputeRun::Cuda) {
    // Every rank must find its GPU, or none goes on (the others would wait in NCCL).
    std::string why = cudaUnavailable();
    int missing = why.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (missing) {
      std::string first;
      for (const std::vector<char> &bytes : comm->gather(std::vector<char>(why.begin(), why.end())))
        if (first.empty() && !bytes.empty())
          first.assign(bytes.begin(), bytes.end());
      e << "schedc: error: " << first << "\n";
      return kExitNoDevice;
    }
  }
  backend::ComputeConfig config = computeRun->config;
  config.dims.batches = batches;
  // The verification run: it decides whether the schedule runs (unless --no-verify), and
  // tells the cuda backend the routes of its messages and the groups of its collectives,
  // whose NCCL communicators it opens before it starts (the same schedule makes the same
  // calls when it computes).
  bool needChannels = computeRun->backend == ComputeRun::Cuda;
  if ((!computeRun->noVerify || needChannels) && evaluated) {
    DiagnosticEngine quiet(sources, nullptr);
    std::ostringstream report;
    sim::RunOptions verifyOptions;
    verifyOptions.limits = options.limits; // no files: this run only decides
    verifyOptions.afterRun = [&](const sim::World &world, sim::CheckResult &) {
      config.routes.assign(world.routes().begin(), world.routes().end());
      config.groups = world.collectiveGroups();
      return std::string();
    };
    int verdict = sim::runAndReport(setup, evaluated, verifyOptions, body(nullptr), sources, quiet, report);
    // Every rank must decide alike, or some would wait in MPI for the others forever.
    MPI_Allreduce(MPI_IN_PLACE, &verdict, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    // A run stopped at a resource limit was not judged: the real run would stop there too.
    bool stopped = verdict == kExitLimit;
    if (verdict != kExitOk && (!computeRun->noVerify || stopped)) {
      for (const Diagnostic &d : quiet.diagnostics()) {
        auto b = d.severity == Severity::Error ? diags.error(d.range, d.message) : diags.warning(d.range, d.message);
        for (const Diagnostic &n : d.notes)
          b.note(n.range, n.message);
      }
      if (!stopped)
        diags.error({}, "`" + setup.schedule + "` is not a correct training step, so the " + computeRun->name() +
                            " backend does not run it "
                            "(--no-verify runs it anyway)");
      if (options.json)
        o << sim::invalidJson(setup.schedule, setup.file, diags, sources);
      return stopped ? kExitLimit : kExitCheckFailed;
    }
  }
  std::unique_ptr<backend::ComputeRank> local = makeComputeRank(computeRun->backend, config, *comm);
  sim::RunOptions runOptions = options;
  runOptions.traceFile.clear(); // a real run writes what it measured (below), not the model's times
  runOptions.timelineFile.clear();
  if (!root) // the events are the same on every rank: rank 0 writes them
    runOptions.eventsFile.clear();
  MPI_Barrier(MPI_COMM_WORLD); // one start for every rank's clock
  origin = RankContext::now();
  runOptions.afterRun = [&](const sim::World &world, sim::CheckResult &result) -> std::string {
    result.backend = computeRun->name();
    // This rank's peak of bytes held, measured at the cost model's sampling points.
    int64_t peak = 0;
    for (const sim::Event &ev : world.events(comm->rank()))
      peak = std::max(peak, ev.measured);
    std::vector<char> mine(reinterpret_cast<const char *>(&peak), reinterpret_cast<const char *>(&peak) + 8);
    for (const std::vector<char> &bytes : comm->gather(mine)) {
      int64_t v;
      std::memcpy(&v, bytes.data(), 8);
      result.measuredPeak.push_back(v);
    }
    // Every collective below happens on every rank, in the same order; only then does
    // rank 0 write files (a rank that returned early would leave the others waiting).
    bool drawing = !options.traceFile.empty() || !options.timelineFile.empty();
    sim::MeasuredRun run;
    if (drawing) { // every rank's measured times and memory, gathered at rank 0
      const std::vector<sim::Event> &events = world.events(comm->rank());
      measured.resize(events.size());
      std::vector<char> mineTimes;
      for (size_t i = 0; i < events.size(); ++i) {
        measured[i].memory = std::max<int64_t>(0, events[i].measured);
        const char *p = reinterpret_cast<const char *>(&measured[i]);
        mineTimes.insert(mineTimes.end(), p, p + sizeof(sim::Measured));
      }
      std::vector<std::vector<char>> all = comm->gather(mineTimes);
      run.resize(all.size());
      for (size_t r = 0; r < all.size(); ++r) {
        run[r].resize(all[r].size() / sizeof(sim::Measured));
        std::memcpy(run[r].data(), all[r].data(), all[r].size());
      }
    }
    std::string problem;
    if (!computeRun->weightsOut.empty() && world.completed())
      problem = local->writeFinalWeights(world.rank(comm->rank()), layers, computeRun->weightsOut,
                                         computeRun->overwriteWeights);
    if (root && drawing && world.completed() && problem.empty()) {
      if (!options.traceFile.empty() &&
          !sim::writeAtomically(options.traceFile, sim::chromeTrace(world, sources, setup.schedule, &run)))
        problem = "cannot write the trace to `" + options.traceFile + "`";
      else if (!options.timelineFile.empty() &&
               !sim::writeAtomically(options.timelineFile,
                                     options.timelineHtml
                                         ? sim::timelineHtml(world, *result.report, sources, setup.schedule, &run)
                                         : sim::timelineSvg(world, *result.report, sources, setup.schedule, &run)))
        problem = "cannot write the timeline to `" + options.timelineFile + "`";
    }
    return problem;
  };
  int code = sim::runAndReport(setup, evaluated, runOptions, body(local.get()), sources, diags, o);
  local->finish();
  comm->finish();
  if (computeRun->stats) {
    // Each rank's line (its GEMM rate next to the library's own, measured now, in the same
    // run, and its communication time); rank 0 prints every rank's line in order.
    std::string line = local->stats();
    for (const std::vector<char> &bytes : comm->gather(std::vector<char>(line.begin(), line.end())))
      err << std::string(bytes.begin(), bytes.end());
  }
  // Every rank ends with rank 0's exit code (only rank 0 writes files).
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
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
