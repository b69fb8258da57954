// Hardware presets, each with where its numbers come from, and the description's keys.
#include "cost/Hardware.h"

namespace schedc::cost {

namespace {

// NVIDIA DGX H100: eight H100 SXM5 80 GB. H100 datasheet (NVIDIA, "H100 Tensor Core GPU",
// 2023): BF16 tensor core 1979 TFLOP/s with sparsity, so 989.5 dense; TF32 tensor core 989
// with sparsity, so 494.5 dense; FP32 67 TFLOP/s;
// 80 GB HBM3 at 3.35 TB/s; fourth-generation NVLink 900 GB/s per GPU in both directions
// together (450 each way). DGX H100 datasheet: eight ConnectX-7 at 400 Gb/s, one per GPU
// (50 GB/s each way). Latencies per ring step are NCCL's own model (src/graph/tuning.cc,
// hwLat, Ring/Simple): 3.4 us over NVLink, 9.6 us over the network; a hop of its tree
// (Tree/Simple, the latency of a 256 kB chunk) 28 and 50 us. The GEMM efficiency,
// 0.7, is an assumption (large bf16 GEMMs on H100 reach about 650-750 TFLOP/s in published
// cuBLAS measurements); calibrate it for a real cluster.
Hardware dgxH100() {
  Hardware h;
  h.name = "dgx-h100";
  h.peakBf16 = 989.5e12, h.peakTf32 = 494.5e12, h.peakFp32 = 67e12, h.gemmEfficiency = 0.7;
  h.memoryBytes = 80e9, h.memoryBandwidth = 3.35e12;
  h.acceleratorsPerNode = 8;
  h.intraBandwidth = 450e9, h.intraLatency = 3.4e-6;
  h.interBandwidth = 50e9, h.interLatency = 9.6e-6;
  h.treeIntraLatency = 28e-6, h.treeInterLatency = 50e-6;
  return h;
}

// NVIDIA DGX A100 80 GB: eight A100 SXM4 80 GB. A100 datasheet (NVIDIA, "A100 Tensor Core
// GPU", 2021): BF16 tensor core 312 TFLOP/s dense, TF32 tensor core 156 dense, FP32 19.5
// TFLOP/s, 80 GB HBM2e at
// 2039 GB/s; third-generation NVLink 600 GB/s per GPU (300 each way). DGX A100 datasheet:
// eight ConnectX-6 at 200 Gb/s for compute traffic, one per GPU (25 GB/s each way).
// Latencies as for dgx-h100 (NCCL's model); GEMM efficiency 0.7, an assumption as above.
Hardware dgxA100() {
  Hardware h;
  h.name = "dgx-a100-80gb";
  h.peakBf16 = 312e12, h.peakTf32 = 156e12, h.peakFp32 = 19.5e12, h.gemmEfficiency = 0.7;
  h.memoryBytes = 80e9, h.memoryBandwidth = 2.039e12;
  h.acceleratorsPerNode = 8;
  h.intraBandwidth = 300e9, h.intraLatency = 3.4e-6;
  h.interBandwidth = 25e9, h.interLatency = 9.6e-6;
  h.treeIntraLatency = 28e-6, h.treeInterLatency = 50e-6;
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

using H = Hardware;
constexpr SettingType kNumber = SettingType::Number;

const Key<H> kKeys[] = {
    {"peak_tflops_bf16", kNumber, nullptr, nullptr, &H::peakBf16, 1e12},
    {"peak_tflops_fp32", kNumber, nullptr, nullptr, &H::peakFp32, 1e12},
    {"peak_tflops_tf32", kNumber, nullptr, nullptr, &H::peakTf32, 1e12},
    {"gemm_efficiency", kNumber, nullptr, nullptr, nullptr, 1, setEfficiency},
    {"memory_gb", kNumber, nullptr, nullptr, &H::memoryBytes, 1e9},
    {"memory_bandwidth_gbs", kNumber, nullptr, nullptr, &H::memoryBandwidth, 1e9},
    {"elementwise_gelems", kNumber, nullptr, nullptr, &H::elementwiseRate, 1e9},
    {"accelerators_per_node", SettingType::Integer, &H::acceleratorsPerNode},
    {"overlap", SettingType::Boolean, nullptr, &H::overlap},
    {"intra_node_bandwidth_gbs", kNumber, nullptr, nullptr, &H::intraBandwidth, 1e9},
    {"intra_node_latency_us", kNumber, nullptr, nullptr, &H::intraLatency, 1e-6},
    {"inter_node_bandwidth_gbs", kNumber, nullptr, nullptr, &H::interBandwidth, 1e9},
    {"inter_node_latency_us", kNumber, nullptr, nullptr, &H::interLatency, 1e-6},
    {"tree_intra_node_latency_us", kNumber, nullptr, nullptr, &H::treeIntraLatency, 1e-6},
    {"tree_inter_node_latency_us", kNumber, nullptr, nullptr, &H::treeInterLatency, 1e-6},
    {"name", SettingType::Text, nullptr, nullptr, nullptr, 1, setName},
};

} // namespace

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
