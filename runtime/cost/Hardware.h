// Hardware — the machine a schedule's seconds are predicted for: one kind of accelerator
// (peak FLOP/s per precision, the fraction of it large GEMMs reach, memory capacity and
// bandwidth), how many sit in a node, and the two kinds of link between them — inside a
// node (NVLink-class) and across nodes (the network, per accelerator). Ranks are placed on
// nodes in order: rank r on node r / acceleratorsPerNode.
// Presets with the sources of their numbers (dgx-h100, dgx-a100-80gb), and the same TOML
// description format as models (DescriptionFile.h):
//   peak_tflops_bf16 peak_tflops_fp32   dense tensor-core / fp32 peak, 10^12 FLOP/s
//   peak_tflops_tf32                    dense TF32 tensor-core peak (fp32 GEMMs with --tf32);
//                                       0 or absent: none, they run at the fp32 peak
//   gemm_efficiency                     the fraction of peak a GEMM reaches, (0, 1], at a
//                                       precision without a table of its own:
//   gemm_tflops_bf16 gemm_tflops_tf32 gemm_tflops_fp32   measured GEMMs, rows of
//                                       [m, n, k, TFLOP/s]; any shape's rate is read off
//                                       them (cost/GemmTable.h)
//   attention_efficiency                the fraction of peak a fused attention kernel
//                                       (FlashAttention) reaches, (0, 1]; 0: a GEMM's
//   memory_efficiency                   the fraction of memory_bandwidth_gbs element-wise,
//                                       normalization and softmax kernels reach, (0, 1]
//   memory_gb memory_bandwidth_gbs      capacity in GiB (2^30 bytes: what an "80 GB" part
//                                       holds); bandwidth in 10^9 bytes/s
//   overhead_gb                         GiB of each accelerator the model cannot have: the
//                                       CUDA context, NCCL's buffers (0 in the presets:
//                                       unmeasured)
//   elementwise_gelems                  10^9 elements/s of a model's element-wise passes
//                                       (0, the presets': not modelled)
//   update_bandwidth_gbs                10^9 bytes/s an optimizer step moves, as
//                                       cost/HardwareCost counts its bytes (0, the
//                                       presets': memory_bandwidth_gbs, a fused optimizer)
//   accelerators_per_node               integer >= 1
//   overlap                             true (the presets): collectives and messages run on
//                                       streams of their own; false: one after another with
//                                       compute, as the cpu backend's one thread runs them
//   intra_node_bandwidth_gbs intra_node_latency_us   per accelerator, one direction
//   inter_node_bandwidth_gbs inter_node_latency_us   per accelerator, one direction
//   all_gather_efficiency reduce_scatter_efficiency   the bandwidth an all-gather or a
//                                       reduce-scatter reaches over a link, as a fraction of
//                                       what an all-reduce reaches (> 0; 1, the presets':
//                                       NCCL's rings reach one bus bandwidth for all three,
//                                       nccl-tests doc/PERFORMANCE.md; a calibrated cpu's MPI
//                                       collectives do not)
//   tree_intra_node_latency_us tree_inter_node_latency_us   a hop of NCCL's tree (0: the
//                                       all-reduce runs on the ring only)
//   name (a string), preset
#pragma once

#include "cost/DescriptionFile.h"
#include "cost/GemmTable.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace schedc::cost {

// A link: bandwidth in bytes/s each way per accelerator, and the latency of one step of a
// ring (one hop) in seconds.
struct Link {
  double bandwidth = 0;
  double latency = 0;
};

struct Hardware {
  std::string name;
  double peakBf16 = 0, peakFp32 = 0;      // FLOP/s
  double peakTf32 = 0;                    // FLOP/s; 0: no TF32 tensor cores
  double gemmEfficiency = 0;              // of peak, for GEMMs of a precision without a table
  GemmTable gemmBf16, gemmTf32, gemmFp32; // measured GEMM shapes; empty: none
  double attentionEfficiency = 0;         // of peak, fused attention; 0: as a GEMM
  double memoryBytes = 0;                 // per accelerator
  double overheadBytes = 0;               // of it, taken by the runtime (CUDA context, NCCL)
  double memoryBandwidth = 0;             // bytes/s
  double memoryEfficiency = 1;            // of the bandwidth, memory-bound kernels
  double elementwiseRate = 0;             // elements/s of element-wise passes; 0: not modelled
  double updateBandwidth = 0;             // bytes/s of an optimizer step; 0: memoryBandwidth
  int64_t acceleratorsPerNode = 0;
  bool overlap = true;                                         // communication on streams of its own
  double intraBandwidth = 0, intraLatency = 0;                 // inside a node
  double interBandwidth = 0, interLatency = 0;                 // across nodes
  double treeIntraLatency = 0, treeInterLatency = 0;           // a tree hop; 0: no tree
  double allGatherEfficiency = 1, reduceScatterEfficiency = 1; // of an all-reduce's bandwidth
  // Memory beyond the accelerators (offload, docs/costs.md "Machines"); 0: not given.
  double hostMemoryBytes = 0;                           // per node, shared by its accelerators' ranks
  double hostMemoryBandwidth = 0;                       // bytes/s, the node's CPUs' DRAM (a CPU optimizer step)
  double pcieBandwidth = 0;                             // bytes/s each way, an accelerator's link to the host
  double nvmeBytes = 0;                                 // per node
  double nvmeReadBandwidth = 0, nvmeWriteBandwidth = 0; // bytes/s, the node's drives together

  // The link a transfer among `nodes` nodes runs over (the slowest it spans).
  Link link(int64_t nodes) const {
    return nodes > 1 ? Link{interBandwidth, interLatency} : Link{intraBandwidth, intraLatency};
  }

  // The precision GEMMs run at here: bf16, else TF32 where asked for and the accelerator has
  // TF32 tensor cores, else fp32; its peak and its name.
  enum class Gemm : uint8_t { Fp32, Tf32, Bf16 };
  Gemm gemm(bool bf16, bool tf32) const { return bf16 ? Gemm::Bf16 : tf32 && peakTf32 > 0 ? Gemm::Tf32 : Gemm::Fp32; }
  double peak(Gemm g) const { return g == Gemm::Bf16 ? peakBf16 : g == Gemm::Tf32 ? peakTf32 : peakFp32; }
  static const char *gemmName(Gemm g) { return g == Gemm::Bf16 ? "bf16" : g == Gemm::Tf32 ? "tf32" : "fp32"; }
  const GemmTable &gemmTable(Gemm g) const {
    return g == Gemm::Bf16 ? gemmBf16 : g == Gemm::Tf32 ? gemmTf32 : gemmFp32;
  }
  // FLOP/s of `batch` GEMMs of m x n x k at precision g: read off its table, else peak x
  // gemm_efficiency; at most what memory lets through (the roofline: FLOPs per byte of its
  // operands and result, (mk + kn + mn) elements of 2 bytes at bf16 and 4 else, x memory
  // bandwidth).
  double gemmRate(Gemm g, double batch, double m, double n, double k) const;
  int64_t nodeOf(int64_t rank) const { return rank / acceleratorsPerNode; }
  // The first problem with the description ("gemm_efficiency must be in (0, 1]"), or "".
  std::string invalid() const;
};

// Every preset, in a fixed order, and one by name (null: none).
const std::vector<Hardware> &hardwarePresets();
const Hardware *findHardwarePreset(const std::string &name);
// "dgx-h100, dgx-a100-80gb": for messages and help.
std::string hardwarePresetNames();

// The hardware `text` (a TOML file) describes, or nullopt with `problem` set.
std::optional<Hardware> parseHardware(const std::string &text, FileProblem &problem);
// Sets `key` (one of the file's keys) from command-line text; "" or what is wrong.
std::string setHardwareField(Hardware &hardware, const std::string &key, const std::string &value);

} // namespace schedc::cost
