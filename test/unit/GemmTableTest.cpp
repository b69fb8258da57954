// Unit tests of GEMM time by shape (cost/GemmTable) and of a layer's kernels
// (cost/Kernels.h, cost/TransformerKernels.cpp): the table's interpolation and its rules
// outside the measured box, the table in a hardware file and on a command line, the
// kernels' FLOPs against the model's, and the bytes of the memory-bound ones worked by hand.
#include "DescriptionProblems.h"
#include "cost/HardwareCost.h"

#include <cmath>
#include <gtest/gtest.h>

namespace schedc::cost {
namespace {

// A 2 x 2 x 2 grid: m, n, k in {1024, 4096}; rate 100 TFLOP/s at the small corner, 400 at
// the large one, 200 elsewhere.
GemmTable grid() {
  std::vector<GemmPoint> points;
  for (double m : {1024.0, 4096.0})
    for (double n : {1024.0, 4096.0})
      for (double k : {1024.0, 4096.0}) {
        int big = (m > 1024) + (n > 1024) + (k > 1024);
        points.push_back({m, n, k, big == 0 ? 100e12 : big == 3 ? 400e12 : 200e12});
      }
  return GemmTable(points);
}

TEST(GemmTable, PointsAreExactAndTheGridIsTrilinearInLogSpace) {
  GemmTable t = grid();
  EXPECT_DOUBLE_EQ(t.rate(1, 1024, 1024, 1024), 100e12);
  EXPECT_DOUBLE_EQ(t.rate(1, 4096, 4096, 4096), 400e12);
  EXPECT_DOUBLE_EQ(t.rate(1, 4096, 1024, 1024), 200e12);
  // Half way along m (2048 is the middle of 1024 .. 4096 in log space) on the small face:
  // the geometric mean of 100 and 200.
  EXPECT_NEAR(t.rate(1, 2048, 1024, 1024), std::sqrt(100e12 * 200e12), 1e3);
  // The centre of the cube: the mean of the eight logs.
  double centre = std::exp((std::log(100e12) + 6 * std::log(200e12) + std::log(400e12)) / 8);
  EXPECT_NEAR(t.rate(1, 2048, 2048, 2048), centre, 1e3);
  // A batch of b products is looked up as b·m rows.
  EXPECT_DOUBLE_EQ(t.rate(4, 1024, 4096, 4096), 400e12);
}

TEST(GemmTable, OutsideTheBoxTheNearestMeasuredShapeGivesTheRate) {
  GemmTable t = grid();
  EXPECT_DOUBLE_EQ(t.rate(1, 16384, 8192, 65536), 400e12); // above: the edge's
  EXPECT_DOUBLE_EQ(t.rate(1, 64, 64, 64), 100e12);         // below: the smallest shape's
  EXPECT_DOUBLE_EQ(t.rate(1, 8192, 4096, 64), 200e12);     // k below, m above
}

// The machine caps any GEMM at its roofline: FLOPs over the bytes of its operands and
// result, times memory bandwidth.
TEST(GemmTable, TheRooflineCapsSmallGemms) {
  Hardware h = *findHardwarePreset("dgx-a100-80gb");
  h.gemmBf16 = grid();
  // 64³ at bf16: 2·64³ FLOPs over 3·64²·2 bytes = 21.3 FLOP/byte, x 2.039 TB/s.
  EXPECT_DOUBLE_EQ(h.gemmRate(Hardware::Gemm::Bf16, 1, 64, 64, 64), 2.0 * 64 * 64 * 64 / (3 * 64 * 64 * 2) * 2.039e12);
  // A batch of 384 products of 2048 x 2048 x 96 (attention's scores): the output's bytes
  // bind, 2·2048²·96 / ((2·2048·96 + 2048²)·2) FLOP/byte.
  double perByte = 2.0 * 2048 * 2048 * 96 / ((2.0 * 2048 * 96 + 2048.0 * 2048) * 2);
  EXPECT_DOUBLE_EQ(h.gemmRate(Hardware::Gemm::Bf16, 384, 2048, 2048, 96), perByte * 2.039e12);
  // Large shapes are compute-bound: the table's rate.
  EXPECT_DOUBLE_EQ(h.gemmRate(Hardware::Gemm::Bf16, 1, 4096, 4096, 4096), 400e12);
  // Without a table, peak x gemm_efficiency, capped the same way.
  h.gemmBf16 = GemmTable();
  EXPECT_DOUBLE_EQ(h.gemmRate(Hardware::Gemm::Bf16, 1, 4096, 4096, 4096), 312e12 * 0.7);
  EXPECT_DOUBLE_EQ(h.gemmRate(Hardware::Gemm::Bf16, 1, 64, 64, 64), 2.0 * 64 * 64 * 64 / (3 * 64 * 64 * 2) * 2.039e12);
}

TEST(GemmTable, ScatteredPointsAreWeightedByInverseDistance) {
  GemmTable t({{1024, 1024, 1024, 100e12}, {4096, 4096, 4096, 400e12}});
  EXPECT_DOUBLE_EQ(t.rate(1, 1024, 1024, 1024), 100e12);
  // Equally far (in log space) from both: the geometric mean.
  EXPECT_NEAR(t.rate(1, 2048, 2048, 2048), 200e12, 1e3);
  // Nearer the small point: nearer its rate.
  double r = t.rate(1, 1024, 1024, 2048);
  EXPECT_GT(r, 100e12);
  EXPECT_LT(r, 200e12);
}

TEST(GemmTable, AHardwareFileAndTheCommandLineGiveTables) {
  FileProblem problem;
  auto h = parseHardware("preset = \"dgx-h100\"\ngemm_tflops_bf16 = [[1024, 1024, 1024, 500], [4096, 4096, 4096, "
                         "750.5]]\nmemory_efficiency = 0.9\nattention_efficiency = 0.6\n",
                         problem);
  ASSERT_TRUE(h) << problem.message;
  ASSERT_EQ(h->gemmBf16.points().size(), 2u);
  EXPECT_DOUBLE_EQ(h->gemmRate(Hardware::Gemm::Bf16, 1, 4096, 4096, 4096), 750.5e12);
  EXPECT_DOUBLE_EQ(h->memoryEfficiency, 0.9);
  EXPECT_DOUBLE_EQ(h->attentionEfficiency, 0.6);
  // A precision without a table: peak x gemm_efficiency.
  EXPECT_DOUBLE_EQ(h->gemmRate(Hardware::Gemm::Fp32, 1, 4096, 4096, 4096), h->peakFp32 * h->gemmEfficiency);
  EXPECT_EQ(setHardwareField(*h, "gemm_tflops_fp32", "[[512, 512, 512, 20]]"), "");
  EXPECT_DOUBLE_EQ(h->gemmRate(Hardware::Gemm::Fp32, 1, 512, 512, 512), 20e12);
  EXPECT_NE(setHardwareField(*h, "gemm_tflops_fp32", "[[512, 512, 20]]").find("row 1 has 3 numbers"),
            std::string::npos);
  EXPECT_NE(setHardwareField(*h, "gemm_tflops_fp32", "fast").find("must be an array of rows"), std::string::npos);
  EXPECT_NE(setHardwareField(*h, "memory_efficiency", "0").find("must be in (0, 1]"), std::string::npos);
}

TEST(GemmTable, ProblemsAreLocated) {
  expectProblems(parseHardware,
                 {
                     ProblemCase{"preset = \"dgx-h100\"\ngemm_tflops_bf16 = [[1, 2, 3]]\n", 2, 20,
                                 "gemm_tflops_bf16: row 1 has 3 numbers; each row is [m, n, k, TFLOP/s]"},
                     ProblemCase{"preset = \"dgx-h100\"\ngemm_tflops_bf16 = [[1, 2, 3, 0]]\n", 2, 20,
                                 "gemm_tflops_bf16: point 1: TFLOP/s must be greater than 0"},
                     ProblemCase{"preset = \"dgx-h100\"\ngemm_tflops_bf16 = [[1, 2, \"3\", 4]]\n", 2, 20,
                                 "gemm_tflops_bf16 must be an array of rows of numbers"},
                     ProblemCase{"preset = \"dgx-h100\"\ngemm_tflops_bf16 = 5\n", 2, 20, "must be an array of rows"},
                     ProblemCase{"preset = \"dgx-h100\"\nattention_efficiency = 2\n", 2, 24, "must be in [0, 1]"},
                 });
}

// Without FlashAttention a layer's GEMM kernels carry exactly the FLOPs the model counts
// for each pass (so MFU and time speak of the same work), at any tensor-parallel split.
TEST(TransformerKernels, TheGemmsAreTheModelsFlops) {
  for (const char *name : {"llama3-8b", "gpt3-175b"})
    for (int64_t parts : {1, 4}) {
      Transformer t = *findTransformerPreset(name);
      t.flashAttention = false;
      for (int64_t layer : {int64_t{0}, int64_t{5}, t.layers - 1}) {
        auto gemmFlops = [&](Pass pass) {
          KernelList kernels;
          t.kernels(layer, pass, {parts, false}, {}, kernels);
          double flops = 0;
          for (const Kernel &k : kernels)
            flops += k.kind == Kernel::Kind::Gemm ? k.flops : 0;
          return flops;
        };
        double share = static_cast<double>(parts);
        EXPECT_NEAR(gemmFlops(Pass::Forward), t.forwardFlops(layer) / share, 1e-9 * t.forwardFlops(layer)) << name;
        EXPECT_NEAR(gemmFlops(Pass::BackwardInput), t.backwardInputFlops(layer) / share,
                    1e-9 * t.backwardInputFlops(layer));
        EXPECT_NEAR(gemmFlops(Pass::BackwardWeight), t.backwardWeightFlops(layer) / share,
                    1e-9 * t.backwardWeightFlops(layer));
        EXPECT_NEAR(gemmFlops(Pass::Backward), t.backwardFlops(layer) / share, 1e-9 * t.backwardFlops(layer));
      }
    }
}

double memoryBytes(const Transformer &t, int64_t layer, Pass pass, ElementSizes size) {
  KernelList kernels;
  t.kernels(layer, pass, {}, size, kernels);
  double bytes = 0;
  for (const Kernel &k : kernels)
    bytes += k.kind == Kernel::Kind::Memory ? k.bytes : 0;
  return bytes;
}

// GPT's middle layer at 16 bits (e = 2), W = sbh, S = as²b: two LayerNorms 2 x 2eW, the
// softmax 2eS and its dropout (2e + 1)S, two bias-dropout-adds (3e + 1)W each, the GeLU
// over the 4h FFN 2e x 4W: 38W + 9S bytes. Its backward: two norms 3eW each, softmax 3eS,
// dropout (2e + 1)S, two residual branches (3e + 2e + 1)W, GeLU 3e x 4W: 58W + 11S.
TEST(TransformerKernels, MemoryBoundKernelsMoveTheirBytes) {
  Transformer t = *findTransformerPreset("gpt3-175b");
  double w = 2048.0 * 12288, s = 96.0 * 2048 * 2048;
  EXPECT_DOUBLE_EQ(memoryBytes(t, 5, Pass::Forward, {}), 38 * w + 9 * s);
  EXPECT_DOUBLE_EQ(memoryBytes(t, 5, Pass::BackwardInput, {}), 58 * w + 11 * s);
  // The weight half adds each micro-batch's gradient to the sum: e + 2g a parameter.
  EXPECT_DOUBLE_EQ(memoryBytes(t, 5, Pass::BackwardWeight, {.activation = 2, .gradient = 4}), t.rankParameters(5) * 10);
  // FlashAttention keeps the s² tensors on chip: none of their bytes.
  t.flashAttention = true;
  EXPECT_DOUBLE_EQ(memoryBytes(t, 5, Pass::Forward, {}), 38 * w);
  // With sequence parallelism over 8, the norms and residuals see 1/8 of the tokens.
  t.tensorParallel = 8, t.sequenceParallel = true;
  EXPECT_DOUBLE_EQ(memoryBytes(t, 5, Pass::Forward, {}), (8 + 14) * w / 8 + 16 * w / 8);
}

// FlashAttention is timed as one kernel at peak x attention_efficiency, half its FLOPs under
// the causal mask; faster than the scores as GEMMs with their softmax and dropout passes.
TEST(TransformerKernels, FlashAttentionIsOneFasterKernel) {
  Transformer t = *findTransformerPreset("gpt3-175b");
  Hardware h = *findHardwarePreset("dgx-a100-80gb");
  h.attentionEfficiency = 0.5;
  auto attentionSeconds = [&](bool flash) {
    t.flashAttention = flash;
    HardwareCost cost(transformerLayers(t), h, {.bf16 = true, .optimizerMoments = 2});
    return cost.passSeconds(5, Pass::Forward, {});
  };
  double withoutFlash = attentionSeconds(false), withFlash = attentionSeconds(true);
  EXPECT_LT(withFlash, withoutFlash);
  KernelList kernels;
  t.kernels(5, Pass::Forward, {}, {}, kernels);
  auto flash =
      std::find_if(kernels.begin(), kernels.end(), [](const Kernel &k) { return k.kind == Kernel::Kind::Attention; });
  ASSERT_NE(flash, kernels.end());
  EXPECT_DOUBLE_EQ(flash->flops, 0.5 * 4 * 2048.0 * 2048 * 12288);
  HardwareCost cost(transformerLayers(t), h, {.bf16 = true, .optimizerMoments = 2});
  EXPECT_DOUBLE_EQ(cost.kernelSeconds(*flash), flash->flops / (312e12 * 0.5));
}

} // namespace
} // namespace schedc::cost
