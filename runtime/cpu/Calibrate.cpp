// Calibrate implementation: each figure is the median of several timed repetitions, taken
// after a warm-up, so a noisy moment of a shared machine moves it little.
#include "cpu/Calibrate.h"
#include "backend/Comm.h"
#include "cost/HardwareCost.h"
#include "cpu/Kernels.h"
#include "diagnostics/InternalError.h"

#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mpi.h>
#include <unistd.h>
#include <vector>

namespace schedc::cpu {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The median time of `repeats` runs of `work`, after one to warm up.
double medianSeconds(int repeats, const std::function<void()> &work) {
  work();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    double start = now();
    work();
    times.push_back(now() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The rates of the backend's own layer at H, T: FLOP/s of its forward's and backward's
// GEMMs (every shape they use, timed inside sgemm: cpu/Kernels.h's GemmStats), in all and
// by shape (over all the repetitions), and
// elements/s of the rest of that work (tanh, dz, fresh result arrays) over the 3 T H / 2
// elements cost/LayerModel.h counts for it; medians of repetitions after a warm-up.
struct LayerRates {
  double gemm = 0, elementwise = 0;
  std::map<std::array<int, 3>, double> byShape; // FLOP/s of each shape over all repetitions
};
LayerRates layerRates(const backend::Dims &dims) {
  const int64_t h = dims.hidden, t = dims.tokens;
  // Layers of their own, as many as the last-level cache cannot hold twice over: a run's
  // layer finds its weight and input in memory, not in the cache the previous one left.
  const auto weightBytes = static_cast<double>(h * h) * sizeof(float);
  const double cache = std::max<double>(static_cast<double>(sysconf(_SC_LEVEL3_CACHE_SIZE)), 0);
  const auto layers = static_cast<size_t>(std::clamp(std::ceil(2 * cache / weightBytes), 2.0, 16.0));
  // A run's values (its inputs and initial weights): tanh takes as long as its argument
  // makes it (a saturated one returns at once).
  std::vector<std::vector<float>> xs, ws;
  for (size_t l = 0; l < layers; ++l) {
    xs.push_back(backend::inputRows(dims, static_cast<int64_t>(l)));
    ws.push_back(backend::initialWeight(dims, static_cast<int64_t>(l), 0, h * h));
  }
  std::vector<float> g = backend::targetRows(dims, 0);
  int64_t units = innerUnits(h);
  size_t next = 0;
  auto once = [&] {
    const std::vector<float> &x = xs[next], &w = ws[next];
    next = (next + 1) % layers;
    std::vector<float> dw, dx;
    (void)forward(x, t, w.data(), units, h, false);
    backward(x, g, t, w.data(), units, h, &dw, &dx, false, false);
  };
  for (size_t l = 0; l < layers; ++l)
    once();
  std::vector<double> gemm, elementwise;
  std::map<std::array<int, 3>, GemmStats::Work> shapes;
  for (size_t r = 0; r < std::max<size_t>(5, layers); ++r) {
    std::map<std::array<int, 3>, GemmStats::Work> before = gemmStats().byShape;
    GemmStats beforeStats = gemmStats();
    double start = now();
    once();
    double seconds = now() - start, inGemm = gemmStats().seconds - beforeStats.seconds;
    gemm.push_back((gemmStats().flops - beforeStats.flops) / std::max(inGemm, 1e-9));
    for (const auto &[shape, work] : gemmStats().byShape) {
      shapes[shape].flops += work.flops - before[shape].flops;
      shapes[shape].seconds += work.seconds - before[shape].seconds;
    }
    elementwise.push_back(1.5 * static_cast<double>(t) * static_cast<double>(h) / std::max(seconds - inGemm, 1e-9));
  }
  std::sort(gemm.begin(), gemm.end());
  std::sort(elementwise.begin(), elementwise.end());
  LayerRates rates{gemm[gemm.size() / 2], elementwise[elementwise.size() / 2], {}};
  for (const auto &[shape, work] : shapes)
    rates.byShape[shape] = work.flops / std::max(work.seconds, 1e-9);
  return rates;
}

// Bytes/s of a = b + s c over arrays of `n` floats (two read, one written), `a` a new array
// each time, as the backend makes every result (in pages the allocator keeps: a run's step
// is measured warm, memory/WarmMemory.h).
double memoryBandwidth(int64_t n) {
  std::vector<float> b(static_cast<size_t>(n), 1.0f), c(b.size(), 2.0f);
  double seconds = medianSeconds(5, [&] {
    std::vector<float> a(b.size());
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = b[i] + 0.5f * c[i];
  });
  return 3.0 * 4.0 * static_cast<double>(n) / seconds;
}

// Bytes/s of an optimizer step over `n` parameters as CpuRank::update runs it (the weight
// and each moment copied out of their values into fresh arrays, then stepped), its bytes
// counted as cost/HardwareCost counts them at fp32.
double updateBandwidth(const backend::Optimizer &optimizer, int64_t n) {
  std::vector<float> weight(static_cast<size_t>(n), 0.5f), gradient(weight.size(), 0.01f);
  std::vector<std::vector<float>> held(static_cast<size_t>(optimizer.moments()), std::vector<float>(weight.size()));
  double seconds = medianSeconds(5, [&] {
    std::vector<float> values = weight;
    std::vector<std::vector<float>> moments = held;
    std::vector<std::vector<float> *> pointers;
    for (auto &m : moments)
      pointers.push_back(&m);
    optimizerStep(optimizer, 0, values, pointers, gradient);
  });
  return static_cast<double>(n) * cost::updateBytesPerParameter(4, false, optimizer.moments()) / seconds;
}

// Half the round trip of `bytes` between ranks 0 and 1 (the others wait).
double oneWaySeconds(int rank, size_t bytes, int repeats) {
  std::vector<char> buffer(std::max<size_t>(bytes, 1));
  int count = static_cast<int>(bytes);
  auto trip = [&] {
    if (rank == 0) {
      MPI_Send(buffer.data(), count, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), count, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buffer.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  };
  double seconds = medianSeconds(repeats, trip) / 2;
  MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return seconds;
}

// The bandwidths ring collectives of a weight (n floats in all) over every rank imply through
// the backend's own calls (backend::Comm: its packing and MPI calls), under NCCL's ring model
// as cost/HardwareCost prices them: bytes x steps / ranks / (time - steps x latency), an
// all-reduce taking 2(ranks - 1) steps, an all-gather or a reduce-scatter ranks - 1. Medians
// of repetitions, each after a barrier (the collective, not the wait for the last rank);
// rank 0's for every rank.
struct CollectiveBandwidths {
  double allReduce = 0, allGather = 0, reduceScatter = 0;
};
CollectiveBandwidths collectiveBandwidths(int64_t n, int size, double latency) {
  backend::Comm comm;
  std::vector<int64_t> members;
  for (int r = 0; r < size; ++r)
    members.push_back(r);
  const int64_t part = n / size;
  std::vector<backend::Piece> mine{backend::Piece{comm.rank() * part, std::vector<float>(static_cast<size_t>(part))}};
  std::vector<float> whole(static_cast<size_t>(part * size), 1.0f);
  auto bandwidth = [&](double steps, const std::function<void()> &collective) {
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = medianSeconds(5, [&] {
      MPI_Barrier(MPI_COMM_WORLD);
      collective();
    });
    MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return 4.0 * static_cast<double>(part * size) * steps / size / std::max(seconds - steps * latency, 1e-9);
  };
  CollectiveBandwidths out;
  out.allReduce = bandwidth(2.0 * (size - 1), [&] { comm.allreduce(whole, members); });
  out.allGather = bandwidth(size - 1, [&] { (void)comm.allgather(mine, members); });
  out.reduceScatter = bandwidth(size - 1, [&] { (void)comm.reduceScatter(whole, members); });
  return out;
}

} // namespace

std::string calibrate(const backend::Dims &dims, const backend::Optimizer &optimizer) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank measures at once, as they compute in a run (they share the machine's cores
  // and memory); rank 0's figures are written.
  MPI_Barrier(MPI_COMM_WORLD);
  LayerRates layer = layerRates(dims);
  double gemm = layer.gemm, elementwise = layer.elementwise;
  double memory = memoryBandwidth(std::max<int64_t>(dims.hidden * dims.hidden, 1 << 22));
  double update = updateBandwidth(optimizer, dims.weightElements()); // a layer's weight
  double latency = 1e-6, bandwidth = 1e12;                           // one rank: nothing is ever sent
  // The all-gather's and reduce-scatter's over the all-reduce's: at sizes where latency
  // decides (the tests' H = 64) the ratios mean little and can be wild, so within [1/20, 4].
  double allGather = 1, reduceScatter = 1;
  if (size > 1) {
    latency = oneWaySeconds(rank, 8, 200);
    CollectiveBandwidths measured = collectiveBandwidths(dims.weightElements(), size, latency);
    bandwidth = measured.allReduce;
    allGather = std::clamp(measured.allGather / bandwidth, 0.05, 4.0);
    reduceScatter = std::clamp(measured.reduceScatter / bandwidth, 0.05, 4.0);
  }
  const backend::NodePlace node = backend::nodePlace();
  std::string table;
  for (const auto &[shape, rate] : layer.byShape) {
    char row[96];
    std::snprintf(row, sizeof row, "%s[%d, %d, %d, %.6g]", table.empty() ? "" : ", ", shape[0], shape[1], shape[2],
                  rate / 1e12);
    table += row;
  }
  char text[4096]; // the fixed text and a table of the layer's few shapes: well within
  int length = std::snprintf(
      text, sizeof text,
      "# This machine as the cpu backend uses it, measured by `--calibrate` with %d rank%s at\n"
      "# H = %lld, T = %lld: the layer's forward and backward GEMMs (OpenBLAS sgemm), the rest\n"
      "# of that work, a STREAM-like triad, the optimizer's step, an MPI ping-pong between ranks\n"
      "# 0 and 1 (latency), an all-reduce of a weight (bandwidth) and the backend's all-gather\n"
      "# and reduce-scatter of one; medians of repetitions, in memory faulted in already.\n"
      "name = \"cpu-calibrated\"\n"
      "peak_tflops_fp32 = %.6g\n"
      "peak_tflops_bf16 = %.6g  # emulated in fp32: the same GEMMs\n"
      "gemm_efficiency = 1.0  # the peak above is the rate measured on the layer's GEMMs\n"
      "# The layer's GEMM shapes [m, n, k, TFLOP/s], each timed inside sgemm as the layer runs:\n"
      "gemm_tflops_fp32 = [%s]\n"
      "memory_gb = %.6g  # GiB\n"
      "memory_bandwidth_gbs = %.6g\n"
      "elementwise_gelems = %.6g  # the forward's and backward's work beside their GEMMs\n"
      "update_bandwidth_gbs = %.6g  # the backend's %s step over a layer's weight\n"
      "accelerators_per_node = %d\n"
      "overlap = false  # one thread: MPI calls block the rank's compute\n"
      "intra_node_bandwidth_gbs = %.6g\n"
      "intra_node_latency_us = %.6g\n"
      "all_gather_efficiency = %.6g  # of the all-reduce's bandwidth, through the backend's calls\n"
      "reduce_scatter_efficiency = %.6g\n"
      "inter_node_bandwidth_gbs = %.6g  # not measured: one node\n"
      "inter_node_latency_us = %.6g\n",
      size, size == 1 ? "" : "s", static_cast<long long>(dims.hidden), static_cast<long long>(dims.tokens), gemm / 1e12,
      gemm / 1e12, table.c_str(), node.memoryPerProcess / 1073741824.0, memory / 1e9, elementwise / 1e9, update / 1e9,
      optimizer.kind == backend::Optimizer::Adam ? "Adam" : "SGD", node.size, bandwidth / 1e9, latency * 1e6, allGather,
      reduceScatter, bandwidth / 1e9, latency * 1e6);
  SCHEDC_ASSERT(length > 0 && static_cast<size_t>(length) < sizeof text, "the calibrated hardware file was cut short");
  return text;
}

} // namespace schedc::cpu
