// Hardware presets, each with where its numbers come from, and the description's keys.
#include "cost/Hardware.h"
#include "cost/GemmPresets.h"

#include <algorithm>

namespace schedc::cost {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024; // an "80 GB" accelerator holds 80 of these

// NVIDIA DGX H100: eight H100 SXM5 80 GB. H100 datasheet (NVIDIA, "H100 Tensor Core GPU",
// 2023): BF16 tensor core 1979 TFLOP/s with sparsity, so 989.5 dense; TF32 tensor core 989
// with sparsity, so 494.5 dense; FP32 67 TFLOP/s;
// 80 GB HBM3 (80 GiB) at 3.35 TB/s; fourth-generation NVLink 900 GB/s per GPU in both directions
// together (450 each way). DGX H100 datasheet: eight ConnectX-7 at 400 Gb/s, one per GPU
// (50 GB/s each way). Latencies per ring step are NCCL's own model (src/graph/tuning.cc,
// hwLat, Ring/Simple): 3.4 us over NVLink, 9.6 us over the network; a hop of its tree
// (Tree/Simple, the latency of a 256 kB chunk) 28 and 50 us. GEMMs: bf16 and TF32 tables
// measured by the OpenXLA authors (cost/GemmPresets.cpp); fp32 without tensor cores at 0.7
// of its peak, an assumption. FlashAttention at 0.34 of the bf16 peak: FlashAttention-2
// (the kernel PyTorch's scaled_dot_product_attention runs) reaches up to 335 TFLOP/s on
// H100 SXM (Dao 2023, "FlashAttention-2", §4.1). Element-wise kernels at the datasheet's
// bandwidth (memory_efficiency 1: unmeasured). Beyond the GPUs: the H100 datasheet's PCIe
// Gen5 at 128 GB/s (64 each way); the DGX H100 datasheet's 2 TB of system memory, two Intel
// Xeon Platinum 8480C (each 8 channels of DDR5-4800: 8 x 38.4 GB/s) and 8 x 3.84 TB NVMe
// U.2 drives of internal storage, striped (RAID 0), whose bandwidth the datasheet does not
// give: each taken at the rating of a PCIe Gen4 U.2 drive of that size, Samsung's PM1733
// (6.4 GB/s sequential read, 3.8 GB/s write; Samsung's announcement, hardwareluxx.de
// 50889), an assumption until measured.
Hardware dgxH100() {
  Hardware h;
  h.name = "dgx-h100";
  h.peakBf16 = 989.5e12, h.peakTf32 = 494.5e12, h.peakFp32 = 67e12, h.gemmEfficiency = 0.7;
  h.gemmBf16 = h100Bf16Gemms(), h.gemmTf32 = h100Tf32Gemms(), h.attentionEfficiency = 0.34;
  h.memoryBytes = 80 * kGiB, h.memoryBandwidth = 3.35e12;
  h.acceleratorsPerNode = 8;
  h.intraBandwidth = 450e9, h.intraLatency = 3.4e-6;
  h.interBandwidth = 50e9, h.interLatency = 9.6e-6;
  h.treeIntraLatency = 28e-6, h.treeInterLatency = 50e-6;
  h.pcieBandwidth = 64e9, h.hostMemoryBytes = 2048 * kGiB, h.hostMemoryBandwidth = 2 * 8 * 38.4e9;
  h.nvmeBytes = 8 * 3.84e12, h.nvmeReadBandwidth = 8 * 6.4e9, h.nvmeWriteBandwidth = 8 * 3.8e9;
  return h;
}

// NVIDIA DGX A100 80 GB: eight A100 SXM4 80 GB. A100 datasheet (NVIDIA, "A100 Tensor Core
// GPU", 2021): BF16 tensor core 312 TFLOP/s dense, TF32 tensor core 156 dense, FP32 19.5
// TFLOP/s, 80 GB HBM2e at
// 2039 GB/s; third-generation NVLink 600 GB/s per GPU (300 each way). DGX A100 datasheet:
// eight ConnectX-6 at 200 Gb/s for compute traffic, one per GPU (25 GB/s each way).
// Latencies as for dgx-h100 (NCCL's model). GEMMs at 0.7 of their peaks, an assumption
// (this preset's since before GEMMs had tables): no measured sweep of A100 shapes was in
// reach, and the one published point, the best shape of a 2024 scan at 267.9 TFLOP/s
// (docs/costs.md), is not what typical shapes reach; the roofline caps small ones.
// FlashAttention-2 at 0.6 of the bf16 peak: it reaches 50-73% of it on A100 in its
// forward and backward (Dao 2023, §4.1). Beyond the GPUs: the A100 datasheet's PCIe Gen4
// at 64 GB/s (32 each way); the DGX A100 640 GB datasheet's 2 TB of system memory, two AMD
// EPYC 7742 (each 8 channels of DDR4-3200: 8 x 25.6 GB/s) and 8 x 3.84 TB NVMe U.2 drives
// (their bandwidth as for dgx-h100's, the same assumption).
Hardware dgxA100() {
  Hardware h;
  h.name = "dgx-a100-80gb";
  h.peakBf16 = 312e12, h.peakTf32 = 156e12, h.peakFp32 = 19.5e12, h.gemmEfficiency = 0.7;
  h.attentionEfficiency = 0.6;
  h.memoryBytes = 80 * kGiB, h.memoryBandwidth = 2.039e12;
  h.acceleratorsPerNode = 8;
  h.intraBandwidth = 300e9, h.intraLatency = 3.4e-6;
  h.interBandwidth = 25e9, h.interLatency = 9.6e-6;
  h.treeIntraLatency = 28e-6, h.treeInterLatency = 50e-6;
  h.pcieBandwidth = 32e9, h.hostMemoryBytes = 2048 * kGiB, h.hostMemoryBandwidth = 2 * 8 * 25.6e9;
  h.nvmeBytes = 8 * 3.84e12, h.nvmeReadBandwidth = 8 * 6.4e9, h.nvmeWriteBandwidth = 8 * 3.8e9;
  return h;
}

std::string setName(Hardware &h, const Setting &s) {
  h.name = s.text;
  return "";
}

std::string setEfficiency(Hardware &h, const Setting &s) {
  if (!(s.number > 0 && s.number <= 1))
    return "gemm_efficiency is " + std::to_string(s.number) + "; it must be in (0, 1]";
  h.gemmEfficiency = s.number;
  return "";
}

// A fraction of a peak, in (0, 1] (`zero` also takes 0: none).
std::string setFraction(double &target, const Setting &s, const char *key, bool zero) {
  if (!(s.number > 0 && s.number <= 1) && !(zero && s.number == 0))
    return std::string(key) + " is " + std::to_string(s.number) + "; it must be in " + (zero ? "[0, 1]" : "(0, 1]");
  target = s.number;
  return "";
}

std::string setAttention(Hardware &h, const Setting &s) {
  return setFraction(h.attentionEfficiency, s, "attention_efficiency", true);
}

std::string setMemoryEfficiency(Hardware &h, const Setting &s) {
  return setFraction(h.memoryEfficiency, s, "memory_efficiency", false);
}

// A collective's bandwidth as a fraction of an all-reduce's: positive.
std::string setCollectiveShare(double &target, const Setting &s, const char *key) {
  if (!(s.number > 0))
    return std::string(key) + " is " + std::to_string(s.number) + "; it must be above 0";
  target = s.number;
  return "";
}
std::string setAllGatherEfficiency(Hardware &h, const Setting &s) {
  return setCollectiveShare(h.allGatherEfficiency, s, "all_gather_efficiency");
}
std::string setReduceScatterEfficiency(Hardware &h, const Setting &s) {
  return setCollectiveShare(h.reduceScatterEfficiency, s, "reduce_scatter_efficiency");
}

// Rows of [m, n, k, TFLOP/s], each positive.
std::string setGemmTable(GemmTable &table, const Setting &s, const char *key) {
  std::vector<GemmPoint> points;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const std::vector<double> &row = s.rows[i];
    if (row.size() != 4)
      return std::string(key) + ": row " + std::to_string(i + 1) + " has " + std::to_string(row.size()) +
             " numbers; each row is [m, n, k, TFLOP/s]";
    points.push_back({row[0], row[1], row[2], row[3] * 1e12});
  }
  GemmTable read(std::move(points));
  if (std::string wrong = read.invalid(); !wrong.empty())
    return std::string(key) + ": " + wrong;
  table = std::move(read);
  return "";
}

std::string setGemmBf16(Hardware &h, const Setting &s) {
  return setGemmTable(h.gemmBf16, s, "gemm_tflops_bf16");
}
std::string setGemmTf32(Hardware &h, const Setting &s) {
  return setGemmTable(h.gemmTf32, s, "gemm_tflops_tf32");
}
std::string setGemmFp32(Hardware &h, const Setting &s) {
  return setGemmTable(h.gemmFp32, s, "gemm_tflops_fp32");
}

using H = Hardware;
constexpr SettingType kNumber = SettingType::Number, kTable = SettingType::Table;

const Key<H> kKeys[] = {
    {"peak_tflops_bf16", kNumber, nullptr, nullptr, &H::peakBf16, 1e12},
    {"peak_tflops_fp32", kNumber, nullptr, nullptr, &H::peakFp32, 1e12},
    {"peak_tflops_tf32", kNumber, nullptr, nullptr, &H::peakTf32, 1e12},
    {"gemm_efficiency", kNumber, nullptr, nullptr, nullptr, 1, setEfficiency},
    {"gemm_tflops_bf16", kTable, nullptr, nullptr, nullptr, 1, setGemmBf16},
    {"gemm_tflops_tf32", kTable, nullptr, nullptr, nullptr, 1, setGemmTf32},
    {"gemm_tflops_fp32", kTable, nullptr, nullptr, nullptr, 1, setGemmFp32},
    {"attention_efficiency", kNumber, nullptr, nullptr, nullptr, 1, setAttention},
    {"memory_gb", kNumber, nullptr, nullptr, &H::memoryBytes, kGiB},
    {"overhead_gb", kNumber, nullptr, nullptr, &H::overheadBytes, kGiB},
    {"memory_bandwidth_gbs", kNumber, nullptr, nullptr, &H::memoryBandwidth, 1e9},
    {"memory_efficiency", kNumber, nullptr, nullptr, nullptr, 1, setMemoryEfficiency},
    {"elementwise_gelems", kNumber, nullptr, nullptr, &H::elementwiseRate, 1e9},
    {"update_bandwidth_gbs", kNumber, nullptr, nullptr, &H::updateBandwidth, 1e9},
    {"accelerators_per_node", SettingType::Integer, &H::acceleratorsPerNode},
    {"overlap", SettingType::Boolean, nullptr, &H::overlap},
    {"intra_node_bandwidth_gbs", kNumber, nullptr, nullptr, &H::intraBandwidth, 1e9},
    {"intra_node_latency_us", kNumber, nullptr, nullptr, &H::intraLatency, 1e-6},
    {"inter_node_bandwidth_gbs", kNumber, nullptr, nullptr, &H::interBandwidth, 1e9},
    {"inter_node_latency_us", kNumber, nullptr, nullptr, &H::interLatency, 1e-6},
    {"all_gather_efficiency", kNumber, nullptr, nullptr, nullptr, 1, setAllGatherEfficiency},
    {"reduce_scatter_efficiency", kNumber, nullptr, nullptr, nullptr, 1, setReduceScatterEfficiency},
    {"tree_intra_node_latency_us", kNumber, nullptr, nullptr, &H::treeIntraLatency, 1e-6},
    {"tree_inter_node_latency_us", kNumber, nullptr, nullptr, &H::treeInterLatency, 1e-6},
    {"host_memory_gb", kNumber, nullptr, nullptr, &H::hostMemoryBytes, kGiB},
    {"host_memory_bandwidth_gbs", kNumber, nullptr, nullptr, &H::hostMemoryBandwidth, 1e9},
    {"pcie_gbs", kNumber, nullptr, nullptr, &H::pcieBandwidth, 1e9},
    {"nvme_gb", kNumber, nullptr, nullptr, &H::nvmeBytes, kGiB},
    {"nvme_gbs", kNumber, nullptr, nullptr, &H::nvmeReadBandwidth, 1e9},
    {"nvme_write_gbs", kNumber, nullptr, nullptr, &H::nvmeWriteBandwidth, 1e9},
    {"name", SettingType::Text, nullptr, nullptr, nullptr, 1, setName},
};

} // namespace

double Hardware::gemmRate(Gemm g, double batch, double m, double n, double k) const {
  const GemmTable &table = gemmTable(g);
  double rate = table.empty() ? peak(g) * gemmEfficiency : table.rate(batch, m, n, k);
  double bytes = batch * (m * k + k * n + m * n) * (g == Gemm::Bf16 ? 2 : 4);
  return std::min(rate, 2 * batch * m * n * k / bytes * memoryBandwidth);
}

std::string Hardware::invalid() const {
  auto positive = [](double v, const char *key) {
    return v > 0 ? std::string() : std::string(key) + " must be given and greater than 0";
  };
  for (std::string wrong :
       {positive(peakBf16, "peak_tflops_bf16"), positive(peakFp32, "peak_tflops_fp32"),
        positive(gemmEfficiency, "gemm_efficiency"), positive(memoryBytes, "memory_gb"),
        positive(memoryBandwidth, "memory_bandwidth_gbs"),
        positive(static_cast<double>(acceleratorsPerNode), "accelerators_per_node"),
        positive(intraBandwidth, "intra_node_bandwidth_gbs"), positive(interBandwidth, "inter_node_bandwidth_gbs")})
    if (!wrong.empty())
      return wrong;
  return "";
}

const std::vector<Hardware> &hardwarePresets() {
  static const std::vector<Hardware> presets{dgxH100(), dgxA100()};
  return presets;
}

const Hardware *findHardwarePreset(const std::string &name) {
  return findNamed(hardwarePresets(), name);
}

std::string hardwarePresetNames() {
  return namesOf(hardwarePresets());
}

std::optional<Hardware> parseHardware(const std::string &text, FileProblem &problem) {
  std::optional<Hardware> h = readDescription<H>(text, kKeys, findHardwarePreset, hardwarePresetNames(), problem);
  if (h)
    if (std::string wrong = h->invalid(); !wrong.empty()) {
      problem = {0, 0, wrong};
      return std::nullopt;
    }
  return h;
}

std::string setHardwareField(Hardware &hardware, const std::string &key, const std::string &value) {
  return setFromText<H>(hardware, kKeys, key, value, "hardware");
}

} // namespace schedc::cost
