// ComputeRun — a compiled schedule run by a real backend (cpu or cuda): one MPI process per
// rank, each computing its own rank's data while the sim backend runs every rank's schedule.
// The steps: the process count must be the schedule's ranks; every rank must find its GPU
// (cuda); a verification run decides whether the schedule runs (unless --no-verify) and
// tells the cuda backend its routes and groups; then the computing run, after which every
// rank's measured peak (and, for --trace/--draw, measured times) are gathered at rank 0,
// which writes the outputs; --stats last. Every collective happens on every rank in the
// same order, so no rank can leave the others waiting.
#include "rt/ComputeRun.h"

#include "backend/Comm.h"
#include "files/AtomicFile.h"
#include "memory/WarmMemory.h"
#include "report/ReportFormat.h"
#include "report/Timeline.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mpi.h>
#include <sstream>

namespace schedc::rt {

namespace {

// The cpu backend's allocations at their most, per byte of the rank's predicted peak: its
// values (the predicted bytes, which it measures exactly) and the transients beside them (the
// update's copies of the weight and moments, the backward's recomputed activations). jemalloc's
// thread.peak.read over stdlib ddp, zero3, gpipe and 1f1b (2 ranks, H 2048, T 512) read
// 1.2–1.8 times the predicted peak; this covers that with room for the allocator's splits.
constexpr double kWarmPerPredictedByte = 2.5;

class RealRun {
public:
  RealRun(Decoded &d, const sim::RunOptions &options, const ComputeRun &run, backend::Comm &comm,
          DiagnosticEngine &diags, const Streams &streams)
      : d_(d), options_(options), run_(run), comm_(comm), diags_(diags), streams_(streams), root_(comm.rank() == 0) {}

  int go(const std::optional<std::vector<int64_t>> &evaluated) {
    backend::ComputeConfig config = run_.config;
    config.dims.batches = evaluated ? d_.parameter("batches", 1) : 1;
    if (int code = checkProcesses(evaluated); code != kExitOk)
      return code;
    if (run_.backend == ComputeRun::Cuda && !everyRankHasAGpu())
      return kExitNoDevice;
    if (int code = verify(evaluated, config); code != kExitOk)
      return code;
    int code = compute(evaluated, config);
    if (run_.stats)
      printStats();
    // Every rank ends with rank 0's exit code (only rank 0 writes files).
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
  }

private:
  int checkProcesses(const std::optional<std::vector<int64_t>> &evaluated) {
    int64_t ranks = d_.parameter("ranks", 1);
    if (!evaluated || ranks == comm_.size())
      return kExitOk;
    streams_.err << "schedc: error: the schedule runs on " << ranks << " ranks, but " << comm_.size()
                 << " processes were started (run it with mpirun -np " << ranks << ")\n";
    return kExitUsage;
  }

  // Every rank must find its GPU, or none goes on (the others would wait in NCCL).
  bool everyRankHasAGpu() {
    std::string why = cudaUnavailable();
    int missing = why.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!missing)
      return true;
    std::string first;
    for (const std::vector<char> &bytes : comm_.gather(std::vector<char>(why.begin(), why.end())))
      if (first.empty() && !bytes.empty())
        first.assign(bytes.begin(), bytes.end());
    streams_.err << "schedc: error: " << first << "\n";
    return false;
  }

  // The verification run: it decides whether the schedule runs (unless --no-verify), and
  // tells the cuda backend the routes of its messages and the groups of its collectives,
  // whose NCCL communicators it opens before it starts (the same schedule makes the same
  // calls when it computes).
  int verify(const std::optional<std::vector<int64_t>> &evaluated, backend::ComputeConfig &config) {
    bool needChannels = run_.backend == ComputeRun::Cuda;
    if ((run_.noVerify && !needChannels) || !evaluated)
      return kExitOk;
    DiagnosticEngine quiet(d_.sources, nullptr);
    std::ostringstream report;
    sim::RunOptions verifyOptions;
    verifyOptions.limits = options_.limits; // no files: this run only decides
    verifyOptions.bytes = options_.bytes;
    verifyOptions.afterRun = [&](const sim::World &world, sim::CheckResult &) {
      config.routes.assign(world.routes().begin(), world.routes().end());
      config.groups = world.collectiveGroups();
      predictedPeak_ = world.rank(comm_.rank()).figures().peakBytes;
      return std::string();
    };
    int verdict = sim::runAndReport(d_.setup, evaluated, verifyOptions, d_.body(nullptr), d_.sources, quiet, report);
    // Every rank must decide alike, or some would wait in MPI for the others forever.
    MPI_Allreduce(MPI_IN_PLACE, &verdict, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    // A run stopped at a resource limit was not judged: the real run would stop there too.
    bool stopped = verdict == kExitLimit;
    if (verdict == kExitOk || (run_.noVerify && !stopped))
      return kExitOk;
    for (const Diagnostic &diag : quiet.diagnostics()) {
      auto b = diag.severity == Severity::Error ? diags_.error(diag.range, diag.message)
                                                : diags_.warning(diag.range, diag.message);
      for (const Diagnostic &n : diag.notes)
        b.note(n.range, n.message);
    }
    if (!stopped)
      diags_.error({}, "`" + d_.setup.schedule + "` is not a correct training step, so the " + run_.name() +
                           " backend does not run it (--no-verify runs it anyway)");
    if (options_.json)
      streams_.out << sim::invalidJson(d_.setup.schedule, d_.setup.file, diags_, d_.sources);
    return stopped ? kExitLimit : kExitCheckFailed;
  }

  int compute(const std::optional<std::vector<int64_t>> &evaluated, const backend::ComputeConfig &config) {
    local_ = makeComputeRank(run_.backend, config, comm_);
    LocalRank here{local_.get(), comm_.rank(), &measured_, 0,
                   !options_.traceFile.empty() || !options_.timelineFile.empty()};
    sim::RunOptions runOptions = options_;
    runOptions.traceFile.clear(); // a real run writes what it measured (afterRun), not the model's times
    runOptions.timelineFile.clear();
    if (!root_) // the events are the same on every rank: rank 0 writes them
      runOptions.eventsFile.clear();
    runOptions.keepEvents = here.settle;          // drawing what it measured needs the events
    runOptions.threads = 1;                       // the ranks' bodies compute on this process's backend
    runOptions.stopRanksAtRepeatedErrors = false; // (a stopped rank's peers would wait in MPI)
    runOptions.afterRun = [this](const sim::World &world, sim::CheckResult &result) { return afterRun(world, result); };
    if (run_.backend == ComputeRun::Cpu) // its tensors are host memory: the step measured warm
      memory::allocateWarm(warmBytes(backend::nodePlace()));
    MPI_Barrier(MPI_COMM_WORLD); // one start for every rank's clock
    local_->clockStarts();
    here.origin = RankContext::now();
    int code = sim::runAndReport(d_.setup, evaluated, runOptions, d_.body(&here), d_.sources, diags_, streams_.out);
    local_->finish();
    comm_.finish();
    return code;
  }

  std::string afterRun(const sim::World &world, sim::CheckResult &result) {
    result.backend = run_.name();
    gatherPeaks(world, result);
    result.measuredSeconds = stepSeconds();
    bool drawing = !options_.traceFile.empty() || !options_.timelineFile.empty();
    sim::MeasuredRun times = drawing ? gatherTimes(world) : sim::MeasuredRun{};
    std::string problem;
    if (!run_.weightsOut.empty() && world.completed())
      problem = local_->writeFinalWeights(world.rank(comm_.rank()), d_.parameter("layers", 1), run_.weightsOut,
                                          run_.overwriteWeights);
    if (root_ && drawing && world.completed() && problem.empty())
      problem = writeDrawings(world, result, times);
    return problem;
  }

  // The step's wall clock, as the cost models count it: from the first event's start on any
  // rank to the last event's end (loading weights and making inputs before the first event
  // are not counted; the clocks share the start after a barrier). The cpu backend's events
  // end when their calls return; the cuda backend's work runs after, and its device says
  // when (deviceSpan).
  double stepSeconds() {
    double span[2] = {1e300, 0}; // -first start, last end: one MPI_MAX for both
    if (std::optional<std::pair<double, double>> device = local_->deviceSpan()) {
      span[0] = device->first;
      span[1] = device->second;
    } else {
      for (const sim::Measured &m : measured_) {
        span[0] = std::min(span[0], m.start);
        span[1] = std::max(span[1], m.start + m.length);
      }
    }
    span[0] = -span[0];
    MPI_Allreduce(MPI_IN_PLACE, span, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return std::max(0.0, span[1] + span[0]);
  }

  // What the cpu backend faults in before its clock starts: kWarmPerPredictedByte of the
  // rank's predicted peak, but never more than half of its share of the node's memory less
  // that peak (the pages stay the process's for the run: several ranks share a node).
  uint64_t warmBytes(const backend::NodePlace &node) const {
    if (!(predictedPeak_ > 0) || !std::isfinite(predictedPeak_))
      return 0;
    return static_cast<uint64_t>(
        std::max(0.0, std::min(kWarmPerPredictedByte * predictedPeak_, node.memoryPerProcess / 2 - predictedPeak_)));
  }

  // Every rank's peak of bytes held in each tier, measured at the cost model's sampling
  // points: on the device, in host memory, on NVMe.
  void gatherPeaks(const sim::World &world, sim::CheckResult &result) {
    const sim::Rank &rank = world.rank(comm_.rank());
    int64_t peaks[3] = {0, rank.measuredTierPeak(Tier::Host), rank.measuredTierPeak(Tier::Nvme)};
    for (size_t i = 0; i < rank.eventCount(); ++i)
      peaks[0] = std::max(peaks[0], rank.measuredAt(i));
    std::vector<char> mine(reinterpret_cast<const char *>(peaks), reinterpret_cast<const char *>(peaks) + sizeof peaks);
    for (const std::vector<char> &bytes : comm_.gather(mine)) {
      std::memcpy(peaks, bytes.data(), sizeof peaks);
      result.measuredPeak.push_back(peaks[0]);
      result.measuredHostPeak.push_back(peaks[1]);
      result.measuredNvmePeak.push_back(peaks[2]);
    }
  }

  // Every rank's measured times and memory, gathered at rank 0.
  sim::MeasuredRun gatherTimes(const sim::World &world) {
    const sim::Rank &rank = world.rank(comm_.rank());
    measured_.resize(rank.eventCount());
    std::vector<char> mine;
    for (size_t i = 0; i < rank.eventCount(); ++i) {
      measured_[i].memory = std::max<int64_t>(0, rank.measuredAt(i));
      const char *p = reinterpret_cast<const char *>(&measured_[i]);
      mine.insert(mine.end(), p, p + sizeof(sim::Measured));
    }
    std::vector<std::vector<char>> all = comm_.gather(mine);
    sim::MeasuredRun times(all.size());
    for (size_t r = 0; r < all.size(); ++r) {
      times[r].resize(all[r].size() / sizeof(sim::Measured));
      std::memcpy(times[r].data(), all[r].data(), all[r].size());
    }
    return times;
  }

  std::string writeDrawings(const sim::World &world, const sim::CheckResult &result, const sim::MeasuredRun &times) {
    const std::string &schedule = d_.setup.schedule;
    if (!options_.traceFile.empty() && !writeAtomically(options_.traceFile, [&](std::ostream &out) {
          sim::writeChromeTrace(out, world, d_.sources, schedule, &times);
        }))
      return "cannot write the trace to `" + options_.traceFile + "`";
    if (!options_.timelineFile.empty() && !writeAtomically(options_.timelineFile, [&](std::ostream &out) {
          sim::writeTimeline(out, options_.timelineHtml, world, *result.report, d_.sources, schedule, &times);
        }))
      return "cannot write the timeline to `" + options_.timelineFile + "`";
    return "";
  }

  // Each rank's line (its GEMM rate next to the library's own, measured now, in the same
  // run, and its communication time); rank 0 prints every rank's line in order.
  void printStats() {
    std::string line = local_->stats();
    for (const std::vector<char> &bytes : comm_.gather(std::vector<char>(line.begin(), line.end())))
      streams_.stats << std::string(bytes.begin(), bytes.end());
  }

  Decoded &d_;
  const sim::RunOptions &options_;
  const ComputeRun &run_;
  backend::Comm &comm_;
  DiagnosticEngine &diags_;
  const Streams &streams_;
  bool root_;
  std::unique_ptr<backend::ComputeRank> local_;
  std::vector<sim::Measured> measured_; // this rank's events, in real time
  double predictedPeak_ = 0;            // this rank's, under the byte model (the verification run's)
};

} // namespace

int computeForReal(Decoded &decoded, const std::optional<std::vector<int64_t>> &evaluated,
                   const sim::RunOptions &options, const ComputeRun &run, backend::Comm &comm, DiagnosticEngine &diags,
                   const Streams &streams) {
  return RealRun(decoded, options, run, comm, diags, streams).go(evaluated);
}

} // namespace schedc::rt
