// Unit tests of the hardware descriptions (cost/Hardware) and the `hardware` cost model
// (cost/HardwareCost): the presets' published numbers, files with located problems, and
// each event's seconds worked by hand from the formulas in HardwareCost.h.
#include "DescriptionProblems.h"
#include "cost/HardwareCost.h"

#include <gtest/gtest.h>

namespace schedc::cost {
namespace {

TEST(Hardware, PresetsCarryTheirDatasheetNumbers) {
  const Hardware *h100 = findHardwarePreset("dgx-h100");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->invalid(), "");
  EXPECT_DOUBLE_EQ(h100->peakBf16, 989.5e12);
  EXPECT_DOUBLE_EQ(h100->memoryBytes, 80.0 * (1 << 30)); // an "80 GB" part holds 80 GiB
  EXPECT_EQ(h100->acceleratorsPerNode, 8);
  EXPECT_DOUBLE_EQ(h100->link(1).bandwidth, 450e9); // NVLink 4: 900 GB/s both ways
  EXPECT_DOUBLE_EQ(h100->link(2).bandwidth, 50e9);  // 400 Gb/s per GPU
  EXPECT_DOUBLE_EQ(h100->treeInterLatency, 50e-6);  // NCCL's Tree/Simple network hop
  EXPECT_EQ(h100->nodeOf(7), 0);
  EXPECT_EQ(h100->nodeOf(8), 1);
  const Hardware *a100 = findHardwarePreset("dgx-a100-80gb");
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->invalid(), "");
  EXPECT_DOUBLE_EQ(a100->peakBf16, 312e12);
  EXPECT_DOUBLE_EQ(h100->peakTf32, 494.5e12); // TF32 tensor cores, dense
  EXPECT_DOUBLE_EQ(a100->peakTf32, 156e12);
  EXPECT_EQ(hardwarePresetNames(), "dgx-h100, dgx-a100-80gb");
  // H100's GEMMs by shape, as the OpenXLA authors measured them (cost/GemmPresets.cpp):
  // 783.3 TFLOP/s bf16 and 401.6 TF32 at 4096³, 236.3 bf16 at 1024³; FlashAttention-2's
  // 335 of 989.5 TFLOP/s.
  EXPECT_DOUBLE_EQ(h100->gemmRate(Hardware::Gemm::Bf16, 1, 4096, 4096, 4096), 783.3e12);
  EXPECT_DOUBLE_EQ(h100->gemmRate(Hardware::Gemm::Tf32, 1, 4096, 4096, 4096), 401.6e12);
  EXPECT_DOUBLE_EQ(h100->gemmRate(Hardware::Gemm::Bf16, 1, 1024, 1024, 1024), 236.3e12);
  EXPECT_DOUBLE_EQ(h100->attentionEfficiency, 0.34);
  // A100: no measured sweep; peak x 0.7.
  EXPECT_TRUE(a100->gemmBf16.empty());
  EXPECT_DOUBLE_EQ(a100->gemmRate(Hardware::Gemm::Bf16, 1, 4096, 4096, 4096), 312e12 * 0.7);
  // Beyond the GPUs (offload): PCIe Gen5 and Gen4 x16 each way, 2 TB of host memory a node,
  // its CPUs' DRAM (2 sockets x 8 channels of DDR5-4800 or DDR4-3200), 8 x 3.84 TB of NVMe
  // striped, each drive at a PM1733's rated 6.4 GB/s read and 3.8 GB/s write (assumed).
  EXPECT_DOUBLE_EQ(h100->pcieBandwidth, 64e9);
  EXPECT_DOUBLE_EQ(a100->pcieBandwidth, 32e9);
  EXPECT_DOUBLE_EQ(h100->hostMemoryBytes, 2048.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(h100->hostMemoryBandwidth, 614.4e9);
  EXPECT_DOUBLE_EQ(a100->hostMemoryBandwidth, 409.6e9);
  EXPECT_DOUBLE_EQ(a100->nvmeBytes, 30.72e12);
  EXPECT_DOUBLE_EQ(a100->nvmeReadBandwidth, 51.2e9);
  EXPECT_DOUBLE_EQ(h100->nvmeWriteBandwidth, 30.4e9);
}

TEST(HardwareFile, TheOffloadKeys) {
  // ZeRO-Infinity's node: 16 GPUs of 32 GB with 1.5 TB of host memory (issue 50's bar).
  Hardware h = *findHardwarePreset("dgx-a100-80gb");
  for (auto [key, value] : {std::pair{"memory_gb", "32"},
                            {"accelerators_per_node", "16"},
                            {"host_memory_gb", "1536"},
                            {"pcie_gbs", "25"},
                            {"host_memory_bandwidth_gbs", "200"},
                            {"nvme_gb", "3000"},
                            {"nvme_gbs", "25"},
                            {"nvme_write_gbs", "12"}})
    EXPECT_EQ(setHardwareField(h, key, value), "") << key;
  EXPECT_DOUBLE_EQ(h.hostMemoryBytes, 1536.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(h.pcieBandwidth, 25e9);
  EXPECT_DOUBLE_EQ(h.hostMemoryBandwidth, 200e9);
  EXPECT_DOUBLE_EQ(h.nvmeBytes, 3000.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(h.nvmeReadBandwidth, 25e9);
  EXPECT_DOUBLE_EQ(h.nvmeWriteBandwidth, 12e9);
  EXPECT_NE(setHardwareField(h, "pcie_gbs", "-1").find("must not be negative"), std::string::npos);
}

TEST(HardwareFile, APresetWithOverridesAndAMachineOfItsOwn) {
  FileProblem problem;
  auto h = parseHardware("preset = \"dgx-h100\"\naccelerators_per_node = 4\ninter_node_bandwidth_gbs = 25\n", problem);
  ASSERT_TRUE(h) << problem.message;
  EXPECT_EQ(h->acceleratorsPerNode, 4);
  EXPECT_DOUBLE_EQ(h->interBandwidth, 25e9);
  EXPECT_DOUBLE_EQ(h->peakBf16, 989.5e12);
  auto own = parseHardware("name = \"lab\"\npeak_tflops_bf16 = 100\npeak_tflops_fp32 = 10\ngemm_efficiency = 0.5\n"
                           "memory_gb = 24\nmemory_bandwidth_gbs = 900\naccelerators_per_node = 2\n"
                           "intra_node_bandwidth_gbs = 32\nintra_node_latency_us = 5\n"
                           "inter_node_bandwidth_gbs = 12.5\ninter_node_latency_us = 20\n",
                           problem);
  ASSERT_TRUE(own) << problem.message;
  EXPECT_EQ(own->name, "lab");
  EXPECT_DOUBLE_EQ(own->intraLatency, 5e-6);
  EXPECT_DOUBLE_EQ(own->interBandwidth, 12.5e9);
  EXPECT_EQ(setHardwareField(*own, "gemm_efficiency", "0.8"), "");
  EXPECT_DOUBLE_EQ(own->gemmEfficiency, 0.8);
  EXPECT_NE(setHardwareField(*own, "gemm_efficiency", "1.5").find("must be in (0, 1]"), std::string::npos);
  EXPECT_NE(setHardwareField(*own, "memory_gb", "lots").find("memory_gb must be a number"), std::string::npos);
  EXPECT_NE(setHardwareField(*own, "nvlink", "1").find("unknown hardware key `nvlink`"), std::string::npos);
}

TEST(HardwareFile, ProblemsAreLocated) {
  expectProblems(parseHardware,
                 {
                     ProblemCase{"preset = \"dgx-h100\"\nmemory = 80\n", 2, 1, "unknown key `memory`"},
                     ProblemCase{"preset = \"dgx-h100\"\nmemory_gb = \"80\"\n", 2, 13, "memory_gb must be a number"},
                     ProblemCase{"preset = \"dgx-h100\"\nmemory_gb = -1\n", 2, 13, "must not be negative"},
                     ProblemCase{"preset = \"dgx-h200\"\n", 1, 10, "unknown preset `dgx-h200`"},
                     ProblemCase{"preset = \"dgx-h100\"\naccelerators_per_node = 0\n", 2, 25, "at least 1"},
                     ProblemCase{"peak_tflops_bf16 = 100\n", 0, 0, "peak_tflops_fp32 must be given"},
                     ProblemCase{"preset = \"dgx-h100\"\npeak_tflops_tf32 = -1\n", 2, 20, "must not be negative"},
                 });
}

// A small model on a machine with round numbers, so every length can be worked by hand.
class HardwareCostTest : public ::testing::Test {
protected:
  HardwareCostTest()
      : cost_(transformerLayers(model()), machine(), {.bf16 = true, .fp32Gradients = false, .optimizerMoments = 2}) {}
  static Transformer model() { // attention's scores as GEMMs, so every FLOP is a GEMM's
    Transformer t = *findTransformerPreset("llama3-8b");
    t.flashAttention = false;
    return t;
  }
  static Hardware machine() {
    Hardware h = *findHardwarePreset("dgx-h100");
    h.peakBf16 = 1000e12, h.gemmEfficiency = 0.5, h.memoryBandwidth = 2e12;
    h.gemmBf16 = GemmTable(); // one rate for every GEMM: peak x gemm_efficiency
    h.intraBandwidth = 400e9, h.intraLatency = 2e-6, h.interBandwidth = 40e9, h.interLatency = 10e-6;
    return h;
  }
  double seconds(const Work &w) const { return cost_.length(w).asDouble(); }
  double parameters(int64_t layer) const { return static_cast<double>(model().layerParameters(layer)); }
  HardwareCost cost_;
};

// A machine whose memory-bound kernels take no time (their bytes over 1e300 bytes/s vanish
// beside any GEMM's seconds), so compute is its GEMMs alone.
Hardware gemmsOnly(Hardware h) {
  h.memoryBandwidth = 1e300;
  return h;
}

// Without FlashAttention, a layer's GEMMs are all its FLOPs: at one rate, compute is FLOPs
// over it.
TEST_F(HardwareCostTest, ComputeIsFlopsOverTheGemmRate) {
  Transformer t = model();
  HardwareCost cost(transformerLayers(t), gemmsOnly(machine()), {.bf16 = true, .optimizerMoments = 2});
  auto seconds = [&](Work w) { return cost.length(w).asDouble(); };
  double rate = 1000e12 * 0.5;
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::Forward, .layer = 3, .microBatches = 2}), 2 * t.forwardFlops(3) / rate);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::Backward, .layer = 3, .microBatches = 1}), t.backwardFlops(3) / rate);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::BackwardWeight, .layer = 0, .microBatches = 1}),
                   t.backwardWeightFlops(0) / rate);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::Forward, .layer = 31, .microBatches = 1}), t.forwardFlops(31) / rate);
  EXPECT_EQ(seconds({.kind = EventKind::Loss, .layer = 32}), 0);
  // Model FLOPs count each layer's forward once, at its backward; hardware FLOPs what runs.
  Work backward{.kind = EventKind::Backward, .layer = 5, .microBatches = 1};
  EXPECT_DOUBLE_EQ(cost_.modelFlops(backward), t.forwardFlops(5) + t.backwardFlops(5));
  EXPECT_EQ(cost_.modelFlops({.kind = EventKind::Forward, .layer = 5, .microBatches = 1}), 0);
  EXPECT_DOUBLE_EQ(cost_.flops({.kind = EventKind::Forward, .layer = 5, .microBatches = 1}), t.forwardFlops(5));
}

TEST_F(HardwareCostTest, CollectivesFollowNcclsRingModel) {
  double whole = 512.0 * 512.0;     // a whole layer in the puzzle's units
  double bytes = parameters(4) * 2; // bf16
  // All-reduce over 8 ranks of one node: 14 steps over NVLink.
  Work allReduce{
      .kind = EventKind::AllReduce, .data = Data::Gradients, .groupSize = 8, .nodes = 1, .layer = 4, .volume = whole};
  EXPECT_DOUBLE_EQ(seconds(allReduce), 14 * 2e-6 + bytes * 14 / (8 * 400e9));
  // Over 16 ranks on 2 nodes: 30 steps, 2 of them across nodes, at the network's bandwidth.
  allReduce.groupSize = 16, allReduce.nodes = 2;
  EXPECT_DOUBLE_EQ(seconds(allReduce), 28 * 2e-6 + 2 * 10e-6 + bytes * 30 / (16 * 40e9));
  // All-gather: each of 8 puts in an eighth; the buffer is the whole layer; 7 steps.
  Work allGather{
      .kind = EventKind::AllGather, .data = Data::Weights, .groupSize = 8, .nodes = 1, .layer = 4, .volume = whole / 8};
  EXPECT_DOUBLE_EQ(seconds(allGather), 7 * 2e-6 + bytes * 7 / (8 * 400e9));
  // Reduce-scatter: the whole gradient in, 7 steps.
  Work reduceScatter{.kind = EventKind::ReduceScatter,
                     .data = Data::Gradients,
                     .groupSize = 8,
                     .nodes = 1,
                     .layer = 4,
                     .volume = whole};
  EXPECT_DOUBLE_EQ(seconds(reduceScatter), seconds(allGather));
  // A group of one moves nothing.
  allReduce.groupSize = 1, allReduce.nodes = 1;
  EXPECT_EQ(seconds(allReduce), 0);
}

// Collectives coalesced into one call (a `group`: DDP's bucket) are one NCCL call over their
// bytes together: one ring's latency, not one a collective. The first is priced as a call of
// its own; each joining one adds the call's length over that of those before it.
TEST_F(HardwareCostTest, ACoalescedCallPaysOneLatency) {
  double whole = 512.0 * 512.0;
  Work first{
      .kind = EventKind::AllReduce, .data = Data::Gradients, .groupSize = 16, .nodes = 2, .layer = 4, .volume = whole};
  Work second = first, third = first;
  second.layer = 5, third.layer = 6;
  double bytes = parameters(4) * 2; // bf16; every layer the same
  double latency = 28 * 2e-6 + 2 * 10e-6, perByte = 30 / (16 * 40e9);
  std::vector<Work> call{first, second, third};
  std::vector<Number> lengths(3);
  cost_.coalescedLengths(call, lengths);
  EXPECT_DOUBLE_EQ(lengths[0].asDouble(), seconds(first));
  EXPECT_DOUBLE_EQ(lengths[0].asDouble() + lengths[1].asDouble() + lengths[2].asDouble(),
                   latency + 3 * bytes * perByte);
  EXPECT_DOUBLE_EQ(lengths[2].asDouble(), bytes * perByte);
  // One alone is priced as without a group.
  cost_.coalescedLengths(std::span<const Work>(call.data(), 1), std::span<Number>(lengths.data(), 1));
  EXPECT_DOUBLE_EQ(lengths[0].asDouble(), seconds(first));
  // Three calls of their own pay it three times.
  EXPECT_DOUBLE_EQ(seconds(first) + seconds(second) + seconds(third), 3 * (latency + bytes * perByte));
}

// NCCL's all-to-all: a send to every peer at once, each slice (n - 1)/n of the buffer over
// its link, the network's share and the node's side by side; one latency a peer; the
// value's tokens once (not a tensor-parallel layer's two collectives).
TEST_F(HardwareCostTest, AnAllToAllSendsEachPeerItsSliceOverItsLink) {
  Work allToAll{.kind = EventKind::AllToAll,
                .data = Data::Activations,
                .groupSize = 8,
                .nodes = 1,
                .layer = 4,
                .volume = 512.0 * 256.0};
  double bytes = cost_.communicationBytes(allToAll);
  ASSERT_GT(bytes, 0);
  EXPECT_DOUBLE_EQ(seconds(allToAll), 7 * 2e-6 + bytes * 7 / 8 / 400e9);
  // 16 ranks on 2 nodes: 7 peers in the node, 8 across the network (the slower side).
  allToAll.groupSize = 16, allToAll.nodes = 2;
  EXPECT_DOUBLE_EQ(seconds(allToAll), 7 * 2e-6 + 8 * 10e-6 + std::max(bytes * 7 / 16 / 400e9, bytes * 8 / 16 / 40e9));
  allToAll.groupSize = 1, allToAll.nodes = 1;
  EXPECT_EQ(seconds(allToAll), 0);
}

// A mixture-of-experts layer split around its all-to-alls: its two sides' seconds, FLOPs and
// update bytes add up to the whole layer's; the experts' side on a rank of an
// expert-parallel group of n computes 1/n of the group's n micro-batches (balanced routing):
// one micro-batch's FLOPs of every expert, as fewer, larger GEMMs (never slower).
TEST(HardwareCostExperts, TheTwoSidesOfALayerAddUpToIt) {
  Transformer t = *findTransformerPreset("mixtral-8x7b");
  t.sequence = 1024, t.layers = 4;
  Hardware h = *findHardwarePreset("dgx-h100");
  HardwareCost cost(transformerLayers(t), h, {.bf16 = true, .optimizerMoments = 2});
  ASSERT_TRUE(cost.modelsExperts());
  for (EventKind kind : {EventKind::Forward, EventKind::Backward, EventKind::BackwardInput, EventKind::BackwardWeight})
    for (int64_t layer : {0, 3}) {
      Work whole{.kind = kind, .layer = layer, .microBatches = 1};
      Work dense = whole, experts = whole;
      dense.half = LayerHalf::Dense;
      experts.half = LayerHalf::Experts, experts.groupSize = 1;
      const char *name = eventName(kind);
      EXPECT_NEAR(cost.length(dense).asDouble() + cost.length(experts).asDouble(), cost.length(whole).asDouble(), 1e-12)
          << name << " " << layer;
      EXPECT_NEAR(cost.flops(dense) + cost.flops(experts), cost.flops(whole), 1) << name;
      EXPECT_NEAR(cost.modelFlops(dense) + cost.modelFlops(experts), cost.modelFlops(whole), 1) << name;
      EXPECT_GT(cost.flops(experts), 0.5 * cost.flops(whole)) << name; // Mixtral's FLOPs are mostly its experts'
      Work group = experts;
      group.groupSize = 8, group.microBatches = 8;
      EXPECT_LE(cost.length(group).asDouble(), cost.length(experts).asDouble() * (1 + 1e-12)) << name;
      EXPECT_NEAR(cost.flops(group), cost.flops(experts), 1) << name;
    }
  // An update of each side: its own parameters (in a side's half units).
  Work update{.kind = EventKind::Update, .data = Data::Weights, .updatedLayer = 1, .volume = 512.0 * 512.0};
  Work denseUpdate = update, expertsUpdate = update;
  denseUpdate.half = LayerHalf::Dense, expertsUpdate.half = LayerHalf::Experts;
  denseUpdate.volume = expertsUpdate.volume = 512.0 * 256.0;
  EXPECT_NEAR(cost.length(denseUpdate).asDouble() + cost.length(expertsUpdate).asDouble(),
              cost.length(update).asDouble(), 1e-12);
  EXPECT_NEAR(cost.communicationBytes(expertsUpdate) / 2, static_cast<double>(t.routedExpertParameters(1)), 1);
  // An all-to-all moves each token's top-2 copies.
  Work dispatch{.kind = EventKind::AllToAll,
                .data = Data::Activations,
                .tokenCopies = true,
                .groupSize = 8,
                .nodes = 1,
                .layer = 1,
                .volume = 512.0 * 256.0};
  EXPECT_DOUBLE_EQ(cost.communicationBytes(dispatch), 2 * 1024 * 4096 * 2.0);
  Work send{
      .kind = EventKind::Pass, .data = Data::Activations, .tokenCopies = true, .layer = 1, .volume = 512.0 * 256.0};
  EXPECT_DOUBLE_EQ(cost.communicationBytes(send), cost.communicationBytes(dispatch)); // a send of them too
  // The capacity factor's padding is computed (HFU) but is not the model's (MFU).
  Transformer padded = t;
  padded.capacityFactor = 2;
  HardwareCost paddedCost(transformerLayers(padded), h, {.bf16 = true, .optimizerMoments = 2});
  Work experts{.kind = EventKind::Backward, .half = LayerHalf::Experts, .groupSize = 1, .layer = 1, .microBatches = 1};
  Work whole{.kind = EventKind::Backward, .layer = 1, .microBatches = 1};
  EXPECT_NEAR(paddedCost.flops(experts), 2 * cost.flops(experts), 1);
  EXPECT_NEAR(paddedCost.modelFlops(experts), cost.modelFlops(experts), 1);
  EXPECT_NEAR(paddedCost.modelFlops(whole), cost.modelFlops(whole), 1);
  EXPECT_GT(paddedCost.flops(whole), cost.flops(whole));
  // A dense model prices no sides.
  EXPECT_FALSE(HardwareCost(transformerLayers(*findTransformerPreset("llama3-8b")), h, {}).modelsExperts());
}

TEST_F(HardwareCostTest, AnAllReduceAcrossManyNodesTakesTheTreeWhenItIsFaster) {
  double whole = 512.0 * 512.0;
  double bytes = parameters(4) * 2;
  double tiny = 1.0 / bytes; // one byte of layer 4's gradient, in the puzzle's units
  // 1024 ranks on 128 nodes: the ring's 2 x 1023 hops against the tree's 2 x (7 + 7).
  Work allReduce{.kind = EventKind::AllReduce,
                 .data = Data::Gradients,
                 .groupSize = 1024,
                 .nodes = 128,
                 .layer = 4,
                 .volume = whole * tiny};
  double treeLatency = 2 * (7 * 28e-6 + 7 * 50e-6);
  EXPECT_DOUBLE_EQ(seconds(allReduce), treeLatency + 1 / (0.45 * 40e9));
  // A whole layer on 16 ranks of 2 nodes: bandwidth decides, and the ring moves
  // 2(n - 1)/n of the bytes to the tree's 1/0.45.
  allReduce.groupSize = 16, allReduce.nodes = 2, allReduce.volume = whole;
  double ring = 28 * 2e-6 + 2 * 10e-6 + bytes * 30 / (16 * 40e9);
  EXPECT_DOUBLE_EQ(seconds(allReduce), ring);
  EXPECT_LT(ring, 2 * (7 * 28e-6 + 50e-6) + bytes / (0.45 * 40e9));
  allReduce.groupSize = 1024, allReduce.nodes = 128;
  // A machine without tree latencies (a calibrated one) runs the ring only.
  Hardware ringOnly = machine();
  ringOnly.treeIntraLatency = ringOnly.treeInterLatency = 0;
  HardwareCost ringCost(transformerLayers(model()), ringOnly, {.bf16 = true, .optimizerMoments = 2});
  allReduce.volume = whole * tiny;
  EXPECT_DOUBLE_EQ(ringCost.length(allReduce).asDouble(), 1792 * 2e-6 + 254 * 10e-6 + 2046.0 / (1024 * 40e9));
}

TEST_F(HardwareCostTest, SendsCrossTheirLinkAndUpdatesAreMemoryBound) {
  Transformer t = model();
  double activation = static_cast<double>(t.sequence * t.microBatch * t.hidden) * 2; // one micro-batch, bf16
  Work send{.kind = EventKind::Pass, .data = Data::Activations, .nodes = 1, .volume = 512.0 * 256.0};
  EXPECT_DOUBLE_EQ(seconds(send), 2e-6 + activation / 400e9);
  send.nodes = 2;
  EXPECT_DOUBLE_EQ(seconds(send), 10e-6 + activation / 40e9);
  EXPECT_EQ(seconds({.kind = EventKind::Pass}), 0); // the receive
  // Adam at bf16 touches 2 (gradient) + 4 + 4 (master) + 16 (moments) + 2 (weight) bytes
  // per parameter of the shard: a quarter of layer 6 here.
  Work update{.kind = EventKind::Update, .data = Data::Weights, .updatedLayer = 6, .volume = 512.0 * 512.0 / 4};
  EXPECT_DOUBLE_EQ(seconds(update), parameters(6) / 4 * 28 / 2e12);
  EXPECT_DOUBLE_EQ(cost_.elementBytes(Data::OptimizerState), 12); // ZeRO's K
}

// With tensor parallelism a compute event waits for its group's all-reduces of s x b x h
// (2 in a forward and a backward's input half, none in its weight half), inside a node;
// a rank is one accelerator of its group, so ranks sit t to a node's accelerators apart.
TEST_F(HardwareCostTest, TensorParallelComputeWaitsForItsAllReduces) {
  Transformer t = model();
  t.tensorParallel = 4;
  HardwareCost cost(transformerLayers(t), gemmsOnly(machine()), {.bf16 = true, .optimizerMoments = 2});
  double rate = 1000e12 * 0.5, bytes = 8192.0 * 4096 * 2; // s x b x h at bf16
  double allReduce = 6 * 2e-6 + bytes * 6 / (4 * 400e9);
  auto seconds = [&](Work w) { return cost.length(w).asDouble(); };
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::Forward, .layer = 3, .microBatches = 2}),
                   2 * (t.forwardFlops(3) / rate + 2 * allReduce));
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::BackwardInput, .layer = 3, .microBatches = 1}),
                   t.backwardInputFlops(3) / rate + 2 * allReduce);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::BackwardWeight, .layer = 3, .microBatches = 1}),
                   t.backwardWeightFlops(3) / rate);
  // Beside the blocks: the vocabulary-parallel embedding's all-reduce in the first layer's
  // forward; the output layer's input-gradient all-reduce and the cross-entropy's three
  // all-reduces of one fp32 value a token in the last layer's.
  double tokenAllReduce = 6 * 2e-6 + 8192.0 * 4 * 6 / (4 * 400e9);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::Forward, .layer = 0, .microBatches = 1}),
                   t.forwardFlops(0) / rate + 3 * allReduce);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::Forward, .layer = 31, .microBatches = 1}),
                   t.forwardFlops(31) / rate + 2 * allReduce + 3 * tokenAllReduce);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::BackwardInput, .layer = 31, .microBatches = 1}),
                   t.backwardInputFlops(31) / rate + 3 * allReduce);
  EXPECT_DOUBLE_EQ(seconds({.kind = EventKind::BackwardWeight, .layer = 0, .microBatches = 1}),
                   t.backwardWeightFlops(0) / rate);
  // With sequence parallelism the embedding reduce-scatters instead, and its weight half
  // all-gathers the gradient back (three all-gathers with the block's two). Reduce-scatters
  // at half the all-gathers' bandwidth here, to tell them apart.
  t.sequenceParallel = true;
  Hardware halfScatter = gemmsOnly(machine());
  halfScatter.reduceScatterEfficiency = 0.5;
  HardwareCost sequence(transformerLayers(t), halfScatter, {.bf16 = true, .optimizerMoments = 2});
  double gather = 3 * 2e-6 + bytes * 3 / (4 * 400e9), scatter = 3 * 2e-6 + bytes * 3 / (4 * 200e9);
  EXPECT_DOUBLE_EQ(sequence.length({.kind = EventKind::BackwardWeight, .layer = 0, .microBatches = 1}).asDouble(),
                   t.backwardWeightFlops(0) / rate + 3 * gather);
  EXPECT_DOUBLE_EQ(sequence.length({.kind = EventKind::Forward, .layer = 0, .microBatches = 1}).asDouble(),
                   t.forwardFlops(0) / rate + 2 * gather + 3 * scatter);
  // With learned positions Megatron all-reduces the embedding, adds them, and splits.
  t.positionEmbeddings = true;
  HardwareCost positions(transformerLayers(t), halfScatter, {.bf16 = true, .optimizerMoments = 2});
  EXPECT_DOUBLE_EQ(positions.length({.kind = EventKind::Forward, .layer = 0, .microBatches = 1}).asDouble(),
                   t.forwardFlops(0) / rate + 2 * gather + 2 * scatter + allReduce);
  EXPECT_EQ(cost.nodeOf(1), 0); // accelerators 4-7 of node 0
  EXPECT_EQ(cost.nodeOf(2), 1);
  // The data-parallel all-reduce of a rank's gradient moves its share of the layer.
  Work grads{.kind = EventKind::AllReduce,
             .data = Data::Gradients,
             .groupSize = 2,
             .nodes = 1,
             .layer = 4,
             .volume = 512.0 * 512.0};
  EXPECT_DOUBLE_EQ(cost.bytesOf(grads), t.rankParameters(4) * 2);
}

// What is made again is counted in hardware FLOPs and not in model FLOPs: with
// FlashAttention alone QKᵀ (2bs²h, in its backward kernel), with selective recomputation
// attention's core (4bs²h), with full recomputation the block's forward; in the backward
// and its input half.
TEST_F(HardwareCostTest, RecomputationIsInHardwareFlops) {
  Transformer t = model();
  double core = 4.0 * 8192 * 8192 * 4096; // 4bs²h, b = 1
  EXPECT_EQ(t.recomputeFlops(3), 0);
  t.flashAttention = true;
  EXPECT_EQ(t.recomputeFlops(3), core / 2);
  t.flashAttention = false, t.recompute = Recompute::Selective;
  EXPECT_EQ(t.recomputeFlops(3), core);
  HardwareCost cost(transformerLayers(t), machine(), {.bf16 = true, .optimizerMoments = 2});
  Work backward{.kind = EventKind::Backward, .layer = 3, .microBatches = 1};
  EXPECT_DOUBLE_EQ(cost.flops(backward), core + t.backwardFlops(3));
  EXPECT_DOUBLE_EQ(cost.modelFlops(backward), t.forwardFlops(3) + t.backwardFlops(3));
  EXPECT_DOUBLE_EQ(cost.flops({.kind = EventKind::BackwardInput, .layer = 3, .microBatches = 2}),
                   2 * (core + t.backwardInputFlops(3)));
  EXPECT_DOUBLE_EQ(cost.flops({.kind = EventKind::BackwardWeight, .layer = 3, .microBatches = 1}),
                   t.backwardWeightFlops(3));
  // Full: the block again (the last layer's logits are not checkpointed, so not rerun).
  t.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(t.recomputeFlops(3), t.forwardFlops(3));
  double logits = 2.0 * 8192 * 4096 * 128256;
  EXPECT_DOUBLE_EQ(t.recomputeFlops(31), t.forwardFlops(31) - logits);
  // ... and its time is the forward's kernels, before the backward's (GEMMs alone here).
  HardwareCost full(transformerLayers(t), gemmsOnly(machine()), {.bf16 = true, .optimizerMoments = 2});
  EXPECT_DOUBLE_EQ(full.length(backward).asDouble(), (t.forwardFlops(3) + t.backwardFlops(3)) / 500e12);
}

// fp32 GEMMs with --tf32 run at the TF32 tensor-core peak where the accelerator has one
// (measured on an H200 before the model knew it: 1.316 s predicted at the fp32 peak
// against 0.21 s), and at the fp32 peak where it has none.
TEST(HardwareCostTanh, TF32GemmsRunAtTheTensorCorePeak) {
  Hardware h = gemmsOnly(*findHardwarePreset("dgx-h100"));
  h.gemmBf16 = h.gemmTf32 = GemmTable(); // the peaks x gemm_efficiency
  h.gemmEfficiency = 1;
  double gemm = 2.0 * 256 * 1024 * 1024;
  Work forward{.kind = EventKind::Forward, .layer = 0, .microBatches = 1};
  HardwareCost fp32(tanhLayers(1024, 256), h, {});
  HardwareCost tf32(tanhLayers(1024, 256), h, {.tf32 = true});
  EXPECT_DOUBLE_EQ(fp32.length(forward).asDouble(), gemm / 67e12);
  EXPECT_DOUBLE_EQ(tf32.length(forward).asDouble(), gemm / 494.5e12);
  EXPECT_DOUBLE_EQ(tf32.peak(), 494.5e12);
  EXPECT_STREQ(tf32.gemmPrecision(), "tf32");
  EXPECT_STREQ(fp32.gemmPrecision(), "fp32");
  HardwareCost bf16(tanhLayers(1024, 256), h, {.bf16 = true});
  EXPECT_STREQ(bf16.gemmPrecision(), "bf16");
  h.peakTf32 = 0; // none: the fp32 peak
  HardwareCost noTensorCores(tanhLayers(1024, 256), h, {.tf32 = true});
  EXPECT_DOUBLE_EQ(noTensorCores.length(forward).asDouble(), gemm / 67e12);
  EXPECT_STREQ(noTensorCores.gemmPrecision(), "fp32");
  FileProblem problem;
  auto file = parseHardware("preset = \"dgx-a100-80gb\"\npeak_tflops_tf32 = 100\n", problem);
  ASSERT_TRUE(file) << problem.message;
  EXPECT_DOUBLE_EQ(file->peakTf32, 100e12);
}

// The real backends' layer: each backward call recomputes h = tanh(x W1) first.
TEST(HardwareCostTanh, EveryBackwardCallRecomputesItsForward) {
  Hardware h = gemmsOnly(*findHardwarePreset("dgx-h100"));
  h.gemmTf32 = GemmTable();
  h.peakFp32 = 100e9, h.gemmEfficiency = 1;
  HardwareCost cost(tanhLayers(1024, 256), h, {});
  double gemm = 2.0 * 256 * 1024 * 1024;
  auto seconds = [&](EventKind kind) { return cost.length({.kind = kind, .layer = 40, .microBatches = 2}).asDouble(); };
  EXPECT_DOUBLE_EQ(seconds(EventKind::Forward), 2 * gemm / 100e9);
  // h = tanh(x W1) again (half a forward), then dh, dx, dW1, dW2 (half a forward each); a
  // weight half alone computes dh too.
  EXPECT_DOUBLE_EQ(seconds(EventKind::Backward), 2 * 2.5 * gemm / 100e9);
  EXPECT_DOUBLE_EQ(seconds(EventKind::BackwardInput), 2 * 1.5 * gemm / 100e9);
  EXPECT_DOUBLE_EQ(seconds(EventKind::BackwardWeight), 2 * 2 * gemm / 100e9);
  // Model FLOPs leave the recomputation out: forward + two backward GEMMs.
  EXPECT_DOUBLE_EQ(cost.modelFlops({.kind = EventKind::Backward, .layer = 40, .microBatches = 1}), 3 * gemm);
  EXPECT_EQ(cost.model().layers(), 0); // any number: the schedule's
  // With an element-wise rate (a calibrated machine): a forward passes over T H / 2
  // elements, every backward call T H.
  h.elementwiseRate = 1e9;
  HardwareCost withElementwise(tanhLayers(1024, 256), h, {});
  auto timed = [&](EventKind kind) {
    return withElementwise.length({.kind = kind, .layer = 0, .microBatches = 2}).asDouble();
  };
  EXPECT_DOUBLE_EQ(timed(EventKind::Forward), 2 * (gemm / 100e9 + 256.0 * 1024 / 2 / 1e9));
  EXPECT_DOUBLE_EQ(timed(EventKind::BackwardWeight), 2 * (2 * gemm / 100e9 + 256.0 * 1024 / 1e9));
  // Communication overlaps compute unless the machine says it does not (the cpu backend).
  EXPECT_FALSE(cost.oneStream());
  h.overlap = false;
  EXPECT_TRUE(HardwareCost(tanhLayers(1024, 256), h, {}).oneStream());
  // fp32 SGD: the update touches 4 (gradient) + 8 (weight) + 8 (momentum) bytes a parameter.
  Work update{.kind = EventKind::Update, .data = Data::Weights, .updatedLayer = 40, .volume = 512.0 * 512.0};
  HardwareCost preset(tanhLayers(1024, 256), *findHardwarePreset("dgx-h100"), {});
  EXPECT_DOUBLE_EQ(preset.length(update).asDouble(),
                   1024.0 * 1024 * 20 / findHardwarePreset("dgx-h100")->memoryBandwidth);
  // A calibrated update bandwidth (the backend's own optimizer step) takes its place.
  Hardware calibrated = *findHardwarePreset("dgx-h100");
  calibrated.updateBandwidth = 10e9;
  EXPECT_DOUBLE_EQ(HardwareCost(tanhLayers(1024, 256), calibrated, {}).length(update).asDouble(),
                   1024.0 * 1024 * 20 / 10e9);
  // The loss's gradient: one pass over each micro-batch's T x H outputs (read y, make the
  // target, write g), which a transformer makes inside its last layer instead.
  EXPECT_DOUBLE_EQ(withElementwise.length({.kind = EventKind::Loss, .layer = 40, .microBatches = 3}).asDouble(),
                   3 * 256.0 * 1024 / 1e9);
}

// A machine whose all-gathers and reduce-scatters reach a share of an all-reduce's bandwidth
// (a calibrated cpu's MPI collectives): their bandwidth terms scale by it, latency does not.
TEST(HardwareCostTanh, AllGatherAndReduceScatterTakeTheirEfficiency) {
  Hardware h = *findHardwarePreset("dgx-h100");
  Work allGather{.kind = EventKind::AllGather,
                 .data = Data::Weights,
                 .groupSize = 8,
                 .nodes = 1,
                 .layer = 0,
                 .volume = 512.0 * 512.0 / 8};
  Work reduceScatter{.kind = EventKind::ReduceScatter,
                     .data = Data::Gradients,
                     .groupSize = 8,
                     .nodes = 1,
                     .layer = 0,
                     .volume = 512.0 * 512.0};
  auto seconds = [&](const Hardware &machine, const Work &w) {
    return HardwareCost(tanhLayers(1024, 256), machine, {}).length(w).asDouble();
  };
  double latency = 7 * h.intraLatency, whole = seconds(h, allGather) - latency;
  EXPECT_DOUBLE_EQ(seconds(h, reduceScatter), seconds(h, allGather));
  h.allGatherEfficiency = 0.5, h.reduceScatterEfficiency = 0.25;
  EXPECT_DOUBLE_EQ(seconds(h, allGather), latency + 2 * whole);
  EXPECT_DOUBLE_EQ(seconds(h, reduceScatter), latency + 4 * whole);
  FileProblem problem;
  EXPECT_FALSE(parseHardware("preset = \"dgx-h100\"\nall_gather_efficiency = 0\n", problem));
  EXPECT_NE(problem.message.find("all_gather_efficiency is 0.000000; it must be above 0"), std::string::npos)
      << problem.message;
}

} // namespace
} // namespace schedc::cost
