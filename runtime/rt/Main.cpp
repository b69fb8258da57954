// Main — schedc_main, the `main` of every compiled schedule, and runProgram, which `schedc
// run` calls directly. Reads the command line (CommandLine.cpp), rebuilds the sources and
// locations from the program description, reads -D, evaluates the parameters with the compiled defaults, and
// runs every rank of the compiled entry through sim::runAndReport — the same path `schedc
// check` takes — so the report and diagnostics are byte for byte the same.
#include "cpu/Calibrate.h"
#include "cpu/Kernels.h"
#include "diagnostics/StandardOutput.h"
#include "engine/Budget.h"
#include "files/AtomicFile.h"
#include "memory/WarmMemory.h"
#include "report/ReportFormat.h"
#include "rt/CommandLine.h"
#include "rt/ComputeRun.h"
#include "rt/Program.h"
#include "run/CostChoice.h"

#include <cstdlib>
#include <iostream>
#include <mpi.h>
#include <sstream>

namespace schedc::rt {

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
  if (overrides && !sim::applyModelLayers(options, decoded.setup, *overrides, diags))
    overrides.reset();
  if (!overrides) {
    if (options.json)
      streams.out << sim::invalidJson(decoded.setup.schedule, decoded.setup.file, diags, decoded.sources);
    return kExitUsage;
  }
  std::optional<std::vector<int64_t>> evaluated = decoded.evaluate(*overrides, diags);
  if (!computeRun) {
    cpu::stopBlasThreads(); // the sim backend multiplies nothing
    return sim::runAndReport(decoded.setup, evaluated, options, decoded.body(nullptr), decoded.sources, diags,
                             streams.out);
  }
  return computeForReal(decoded, evaluated, options, *computeRun, *comm, diags, streams);
}

namespace {

// Says `message` on stderr; under mpirun, with the rank that failed (the command line is read
// before MPI starts, on every rank). One write for the line: every rank says it, and pieces
// written apart were interleaved with another rank's ("schedc: error: schedc: error: rank 1:
// rank 0: ...", seen under ASan).
int fail(const std::string &message, int code) {
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (!rank)
    rank = std::getenv("PMI_RANK");
  std::cerr << "schedc: error: " + (rank ? "rank " + std::string(rank) + ": " : "") + message + "\n";
  return code;
}

// The run on the sim backend: one process, no MPI.
int simulate(const schedc_program &program, const CommandLine &line) {
  try {
    sim::RunOptions options = line.options;
    options.lastRun = true; // the executable exits after its one run
    return runProgram(program, line.options.defines, options, std::cout, std::cerr);
  } catch (const std::exception &e) {
    std::cerr << "schedc: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

// --calibrate: this machine measured into a hardware file, which rank 0 writes.
int calibrateHere(const CommandLine &line) {
  if (line.run.backend == ComputeRun::Cuda)
    if (std::string why = cudaUnavailable(); !why.empty()) {
      std::cerr << "schedc: error: " << why << "\n";
      return kExitNoDevice;
    }
  if (line.run.backend == ComputeRun::Cpu)
    memory::allocateWarm(0); // measured as a run's step is (memory/WarmMemory.h)
  std::string text = line.run.backend == ComputeRun::Cuda
                         ? calibrateCuda()
                         : cpu::calibrate(line.run.config.dims, line.run.config.optimizer);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    return kExitOk;
  if (!writeAtomically(line.calibrate, text)) {
    std::cerr << "schedc: error: cannot write the hardware file `" << line.calibrate << "`\n";
    return kExitIoError;
  }
  std::cout << text;
  return kExitOk;
}

// The run on a real backend: this process is one MPI rank.
int computeOnThisRank(const schedc_program &program, const CommandLine &line, int &argc, char **&argv) {
  MPI_Init(&argc, &argv);
  int code = kExitInternal;
  try {
    code = line.calibrate.empty()
               ? runProgram(program, line.options.defines, line.options, std::cout, std::cerr, &line.run)
               : calibrateHere(line);
  } catch (const std::exception &e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cerr << "schedc: internal error: rank " + std::to_string(rank) + ": " + e.what() + "\n";
    MPI_Abort(MPI_COMM_WORLD, kExitInternal);
  }
  MPI_Finalize();
  return code;
}

} // namespace

} // namespace schedc::rt

extern "C" int schedc_main(const schedc_program *program, int argc, char **argv) {
  namespace rt = schedc::rt;
  schedc::sim::installOutOfMemoryHandler();
  schedc::guardStandardStreams();
  rt::Refusal refusal;
  std::optional<rt::CommandLine> line = rt::readCommandLine(std::vector<std::string>(argv + 1, argv + argc), refusal);
  if (!line)
    return rt::fail(refusal.message +
                        (refusal.exitCode == schedc::kExitUsage ? " (see " + std::string(argv[0]) + " --help)" : ""),
                    refusal.exitCode);
  if (line->help) {
    std::cout << rt::helpText(argv[0]);
    return schedc::finishStandardOutput(schedc::kExitOk, argv[0]);
  }
  int code = line->computing ? rt::computeOnThisRank(*program, *line, argc, argv) : rt::simulate(*program, *line);
  return schedc::finishStandardOutput(code, argv[0]);
}
