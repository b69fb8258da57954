// Calibrate implementation: each figure is the median of several timed repetitions, taken
// after a warm-up, so a noisy moment of a shared machine moves it little.
#include "cpu/Calibrate.h"
#include "backend/Comm.h"
#include "cpu/Kernels.h"
#include "diagnostics/InternalError.h"

#include <algorithm>
#include <cblas.h>
#include <chrono>
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
LayerRates layerRates(int64_t h, int64_t t) {
  std::vector<float> x(static_cast<size_t>(t * h), 0.5f), w(static_cast<size_t>(h * h), 0.25f), g(x.size(), 0.1f);
  int64_t units = innerUnits(h);
  auto once = [&] {
    std::vector<float> dw, dx;
    (void)forward(x, t, w.data(), units, h, false);
    backward(x, g, t, w.data(), units, h, &dw, &dx, false, false);
  };
  once();
  std::vector<double> gemm, elementwise;
  std::map<std::array<int, 3>, GemmStats::Work> shapes;
  for (int r = 0; r < 5; ++r) {
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

// Bytes/s of a = b + s c over arrays of `n` floats (two read, one written), `a` fresh each
// time: the backend makes every result in a new array, so its element-wise work pays for
// first touching the memory too.
double memoryBandwidth(int64_t n) {
  std::vector<float> b(static_cast<size_t>(n), 1.0f), c(b.size(), 2.0f);
  double seconds = medianSeconds(5, [&] {
    std::vector<float> a(b.size());
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = b[i] + 0.5f * c[i];
  });
  return 3.0 * 4.0 * static_cast<double>(n) / seconds;
}

// The bandwidth a ring all-reduce of `n` floats over every rank implies (NCCL's model, as
// cost/HardwareCost prices it): bytes x 2(n - 1)/n / (time - the steps' latency).
double allReduceBandwidth(int64_t n, int size, double latency) {
  std::vector<float> data(static_cast<size_t>(n), 1.0f);
  MPI_Barrier(MPI_COMM_WORLD);
  double seconds = medianSeconds(5, [&] {
    MPI_Barrier(MPI_COMM_WORLD); // time the collective, not the wait for the last rank
    MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double steps = 2.0 * (size - 1);
  double bytes = 4.0 * static_cast<double>(n) * steps / size;
  return bytes / std::max(seconds - steps * latency, 1e-9);
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

} // namespace

std::string calibrate(const backend::Dims &dims) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank measures at once, as they compute in a run (they share the machine's cores
  // and memory); rank 0's figures are written.
  MPI_Barrier(MPI_COMM_WORLD);
  LayerRates layer = layerRates(dims.hidden, dims.tokens);
  double gemm = layer.gemm, elementwise = layer.elementwise;
  double memory = memoryBandwidth(std::max<int64_t>(dims.hidden * dims.hidden, 1 << 22));
  double latency = 0, bandwidth = 0;
  if (size > 1) {
    latency = oneWaySeconds(rank, 8, 200);
    bandwidth = allReduceBandwidth(dims.hidden * dims.hidden, size, latency); // a weight's gradient
  } else {
    latency = 1e-6, bandwidth = 1e12; // one rank: nothing is ever sent
  }
  int perNode = backend::nodePlace().size;
  double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
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
      "# of that work, a STREAM-like triad into fresh memory, an MPI ping-pong between ranks\n"
      "# 0 and 1 (latency) and an all-reduce of a weight (bandwidth); medians of repetitions.\n"
      "name = \"cpu-calibrated\"\n"
      "peak_tflops_fp32 = %.6g\n"
      "peak_tflops_bf16 = %.6g  # emulated in fp32: the same GEMMs\n"
      "gemm_efficiency = 1.0  # the peak above is the rate measured on the layer's GEMMs\n"
      "# The layer's GEMM shapes [m, n, k, TFLOP/s], each timed inside sgemm as the layer runs:\n"
      "gemm_tflops_fp32 = [%s]\n"
      "memory_gb = %.6g  # GiB\n"
      "memory_bandwidth_gbs = %.6g\n"
      "elementwise_gelems = %.6g  # the forward's and backward's work beside their GEMMs\n"
      "accelerators_per_node = %d\n"
      "overlap = false  # one thread: MPI calls block the rank's compute\n"
      "intra_node_bandwidth_gbs = %.6g\n"
      "intra_node_latency_us = %.6g\n"
      "inter_node_bandwidth_gbs = %.6g  # not measured: one node\n"
      "inter_node_latency_us = %.6g\n",
      size, size == 1 ? "" : "s", static_cast<long long>(dims.hidden), static_cast<long long>(dims.tokens), gemm / 1e12,
      gemm / 1e12, table.c_str(), physical / perNode / 1073741824.0, memory / 1e9, elementwise / 1e9, perNode,
      bandwidth / 1e9, latency * 1e6, bandwidth / 1e9, latency * 1e6);
  SCHEDC_ASSERT(length > 0 && static_cast<size_t>(length) < sizeof text, "the calibrated hardware file was cut short");
  return text;
}

} // namespace schedc::cpu
