// Unit tests of the transformer model descriptions (cost/Transformer.h, TransformerFile.h):
// the presets' parameter counts against the published ones, Korthikanti et al.'s activation
// bytes per layer, Megatron-LM's FLOPs per layer, and model files with their located errors.
#include "cost/Transformer.h"
#include "DescriptionProblems.h"
#include "cost/TransformerFile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

namespace schedc::cost {
namespace {

const Transformer &preset(const char *name) {
  const Transformer *t = findTransformerPreset(name);
  EXPECT_NE(t, nullptr) << name;
  return *t;
}

// In units of 0.1 B, as the sources round them.
double billions(int64_t parameters) {
  return std::round(static_cast<double>(parameters) / 1e8) / 10;
}

TEST(Transformer, PresetsHaveThePublishedParameterCounts) {
  EXPECT_EQ(preset("gpt3-175b").parameters(), 174'604'259'328); // "175B"
  EXPECT_EQ(preset("llama3-8b").parameters(), 8'030'261'248);   // the released model's count
  EXPECT_EQ(billions(preset("llama3-70b").parameters()), 70.6);
  EXPECT_EQ(billions(preset("llama3-405b").parameters()), 405.9);
  EXPECT_EQ(billions(preset("megatron-22b").parameters()), 22.1);
  EXPECT_EQ(billions(preset("megatron-530b").parameters()), 529.6); // Narayanan et al. 2021, Table 1
  EXPECT_EQ(billions(preset("megatron-1t").parameters()), 1008.0);  // likewise
  for (const Transformer &t : transformerPresets())
    EXPECT_EQ(t.invalid(), "") << t.name;
}

// Mixture-of-experts presets: every expert's parameters, and the active ones a token computes
// with (its top-k routed experts), against the published totals — Mixtral 8x7B 46.7 B / 12.9 B
// (Jiang et al. 2024, §2), DeepSeek-V3 671 B / 37 B (DeepSeek-AI 2024, abstract).
TEST(Transformer, MixtureOfExpertsPresetsHaveThePublishedTotalAndActiveCounts) {
  const Transformer &mixtral = preset("mixtral-8x7b");
  EXPECT_NEAR(static_cast<double>(mixtral.parameters()) / 46.7e9, 1, 0.01);
  EXPECT_NEAR(static_cast<double>(mixtral.activeParameters()) / 12.9e9, 1, 0.01);
  EXPECT_EQ(billions(mixtral.parameters()), 46.7);
  EXPECT_EQ(billions(mixtral.activeParameters()), 12.9);
  const Transformer &deepseek = preset("deepseek-v3");
  EXPECT_NEAR(static_cast<double>(deepseek.parameters()) / 671e9, 1, 0.02);
  EXPECT_NEAR(static_cast<double>(deepseek.activeParameters()) / 37e9, 1, 0.02);
  // Worked by hand from the report's shapes: MLA 187 107 328 a layer with its two latent norms,
  // each expert 3 x 7168 x 2048, the router 256 x 7168, the dense FFN 3 x 7168 x 18 432.
  const int64_t attention = 187'107'328, norms = 2 * 7168, expert = 3 * 7168 * 2048;
  EXPECT_EQ(deepseek.layerParameters(1), attention + norms + 3 * 7168 * 18432);
  EXPECT_EQ(deepseek.layerParameters(30), attention + norms + 257 * expert + 256 * 7168);
  EXPECT_EQ(deepseek.routedExpertParameters(30), 256 * expert);
  EXPECT_EQ(deepseek.routedExpertParameters(2), 0); // a dense layer
  // A dense model's active parameters are all of them.
  EXPECT_EQ(preset("llama3-8b").activeParameters(), preset("llama3-8b").parameters());
}

// Korthikanti et al. 2022, §4.1: sbh(34 + 5as/h) bytes per layer in 16-bit, sbh·34 when the
// attention scores are not kept.
TEST(Transformer, ActivationBytesAreKorthikantisFormula) {
  for (const char *name : {"megatron-22b", "megatron-175b", "megatron-530b", "megatron-1t", "gpt3-175b"}) {
    Transformer t = preset(name);
    for (int64_t b : {1, 4}) {
      t.microBatch = b;
      // sbh(34 + 5as/h) = 34sbh + 5as²b, in whole bytes (5as/h is not whole for 22B).
      int64_t s = t.sequence, h = t.hidden, a = t.heads, sbh = s * b * h;
      t.flashAttention = false;
      EXPECT_EQ(t.activationBytes(3), static_cast<double>(34 * sbh + 5 * a * s * s * b)) << name;
      t.flashAttention = true;
      EXPECT_EQ(t.activationBytes(3), static_cast<double>(34 * sbh)) << name;
    }
  }
}

// The same with tensor parallelism over t = 8 (Korthikanti et al. 2022, Table 2): sbh(10 +
// 24/t + 5as/(ht)) per accelerator; with sequence parallelism (sbh/t)(34 + 5as/h); with
// selective recomputation as well, 34sbh/t.
TEST(Transformer, ActivationBytesWithTensorAndSequenceParallelism) {
  for (const char *name : {"megatron-22b", "megatron-175b", "megatron-530b", "megatron-1t"}) {
    Transformer t = preset(name);
    t.tensorParallel = 8;
    ASSERT_EQ(t.invalid(), "") << name;
    int64_t s = t.sequence, b = t.microBatch, h = t.hidden, a = t.heads, sbh = s * b * h, scores = 5 * a * s * s * b;
    EXPECT_EQ(t.activationBytes(3), static_cast<double>(10 * sbh + 24 * sbh / 8 + scores / 8)) << name;
    t.sequenceParallel = true;
    EXPECT_EQ(t.activationBytes(3), static_cast<double>((34 * sbh + scores) / 8)) << name;
    t.flashAttention = true;
    EXPECT_EQ(t.activationBytes(3), static_cast<double>(34 * sbh / 8)) << name;
    EXPECT_EQ(t.boundaryElements(), static_cast<double>(sbh / 8)); // split along the sequence
    t.sequenceParallel = false;
    EXPECT_EQ(t.boundaryElements(), static_cast<double>(sbh));
  }
}

// Each accelerator of a tensor-parallel group holds 1/t of the matrices and of the
// vocabulary's embedding and output layer, the norms whole, and does 1/t of every FLOP.
TEST(Transformer, TensorParallelSharesOfParametersAndFlops) {
  Transformer t = preset("megatron-175b");
  t.biases = false;
  double whole = static_cast<double>(t.layerParameters(5));
  t.tensorParallel = 8;
  double h = 12288, V = 51200, norms = 2 * 2 * h; // two LayerNorms, weight and bias
  EXPECT_EQ(whole, 12 * h * h + norms);
  EXPECT_EQ(t.rankParameters(5), 12 * h * h / 8 + norms);
  double s = 2048;
  // The first layer adds the vocabulary's share of the embedding and the learned positions
  // whole; the last the final norm (the output layer is the embedding: tied).
  EXPECT_EQ(t.rankParameters(0), (12 * h * h + V * h) / 8 + norms + s * h);
  EXPECT_EQ(t.rankParameters(t.layers - 1), 12 * h * h / 8 + norms + 2 * h);
  EXPECT_EQ(t.forwardFlops(5), (24 * s * h * h + 4 * s * s * h) / 8);
  EXPECT_EQ(t.backwardWeightFlops(5), 24 * s * h * h / 8);
}

// Keeping only what the attention scores do not need saves 70% of GPT-3's activation memory
// (Korthikanti et al. 2022, as seeds/004 quotes it).
TEST(Transformer, SelectiveRecomputationSavesSeventyPercentOnGpt3) {
  Transformer t = preset("gpt3-175b");
  double full = t.activationBytes(0);
  t.flashAttention = true;
  EXPECT_EQ(std::round(100 * (1 - t.activationBytes(0) / full)), 70);
}

// Grouped-query attention keeps K and V of kvHeads heads; a gated MLP three FFN-sized tensors.
TEST(Transformer, ActivationBytesOfALlamaLayer) {
  Transformer t = preset("llama3-8b");
  t.flashAttention = true;
  double sb = 8192, h = 4096, kv = 1024, ffn = 14336;
  EXPECT_EQ(t.activationBytes(0), 2 * sb * h * 3 + 2 * sb * kv * 2 + 3 * 2 * sb * ffn + 2 * sb * h + 4 * sb * h);
}

// Narayanan et al. 2021, §5.1: a GPT layer's forward is 24bsh² + 4bs²h; the backward twice
// that, split into an input half with all of attention's and a weight half of the GEMMs.
TEST(Transformer, FlopsPerLayerAreMegatrons) {
  Transformer t = preset("megatron-175b");
  t.biases = false; // FLOPs count the matrices only either way
  double s = 2048, h = 12288, b = 1, V = 51200;
  double forward = 24 * b * s * h * h + 4 * b * s * s * h;
  EXPECT_EQ(t.forwardFlops(0), forward);
  EXPECT_EQ(t.backwardFlops(0), 2 * forward);
  EXPECT_EQ(t.backwardWeightFlops(0), 24 * b * s * h * h);
  EXPECT_EQ(t.forwardFlops(t.layers - 1), forward + 2 * b * s * h * V); // the logits
  double model = 0;
  for (int64_t l = 0; l < t.layers; ++l)
    model += t.forwardFlops(l) + t.backwardFlops(l);
  // Narayanan et al.'s per-iteration count without recomputation: 72Bslh²(1 + s/6h + V/12lh).
  double l = static_cast<double>(t.layers);
  EXPECT_DOUBLE_EQ(model, 72 * b * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)));
}

// The model a file describes; a failure of the test if it has a problem.
std::optional<Transformer> parsed(const char *text) {
  FileProblem problem;
  std::optional<Transformer> t = parseTransformer(text, problem);
  EXPECT_TRUE(t) << problem.message;
  return t;
}

TEST(TransformerFile, APresetWithOverrides) {
  auto t = parsed("preset = \"llama3-70b\"\nsequence = 4096\nflash_attention = false\nrecompute = \"full\"\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->layers, 80);
  EXPECT_EQ(t->sequence, 4096);
  EXPECT_FALSE(t->flashAttention);
  EXPECT_EQ(t->recompute, Recompute::Full);
  EXPECT_EQ(setTransformerField(*t, "recompute", "selective"), "");
  EXPECT_EQ(t->recompute, Recompute::Selective);
  EXPECT_TRUE(findTransformerPreset("llama3-8b")->flashAttention);     // Llama 3 trains with it
  EXPECT_FALSE(findTransformerPreset("megatron-22b")->flashAttention); // the papers' accounting
  EXPECT_EQ(setTransformerField(*t, "micro_batch", "2"), "");
  EXPECT_EQ(t->microBatch, 2);
  EXPECT_EQ(setTransformerField(*t, "norm", "layernorm"), "");
  EXPECT_EQ(t->norm, Norm::LayerNorm);
}

TEST(TransformerFile, AModelOfItsOwnTakesTheUsualDefaults) {
  auto t = parsed("layers = 2\nhidden = 64\nheads = 4\nvocab = 100\nsequence = 16\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kvHeads, 4);
  EXPECT_EQ(t->ffn, 256);
}

TEST(TransformerFile, ProblemsAreLocated) {
  expectProblems(
      parseTransformer,
      {
          ProblemCase{"preset = \"llama3-70b\"\nlayer = 3\n", 2, 1, "unknown key `layer`"},
          ProblemCase{"preset = \"llama3-70b\"\nlayers = \"80\"\n", 2, 10, "layers must be an integer"},
          ProblemCase{"preset = \"llama3-70b\"\nlayers = 0\n", 2, 10, "layers is 0; it must be at least 1"},
          ProblemCase{"preset = \"gpt5\"\n", 1, 10, "unknown preset `gpt5`"},
          ProblemCase{"preset = \"llama3-70b\"\nnorm = \"batchnorm\"\n", 2, 8, "expected layernorm or rmsnorm"},
          ProblemCase{
              "preset = \"llama3-70b\"\nrecompute = \"some\"\n", 2, 13,
              "recompute is `some`; it is none, selective (attention's core) or full (every layer from its input)"},
          ProblemCase{"preset = \"llama3-70b\"\nlayers = \n", 2, 10, ""},
          ProblemCase{"preset = \"llama3-70b\"\nheads = 48\n", 0, 0, "heads (48) must divide hidden (8192)"},
          ProblemCase{"hidden = 64\nheads = 4\nvocab = 100\nsequence = 16\n", 0, 0,
                      "layers is 0; it must be at least 1"},
          ProblemCase{"preset = 7\n", 1, 10, "preset must be a string"},
          ProblemCase{"preset = \"llama3-8b\"\ntensor_parallel = 16\n", 0, 0,
                      "tensor_parallel (16) must divide kv_heads (8): each rank holds whole heads"},
          ProblemCase{"preset = \"llama3-8b\"\ntensor_parallel = 0\n", 2, 19, "tensor_parallel is 0"},
      });
  Transformer t = preset("llama3-8b");
  EXPECT_NE(setTransformerField(t, "layers", "eight").find("must be an integer"), std::string::npos);
  EXPECT_NE(setTransformerField(t, "dropout", "yes").find("true or false"), std::string::npos);
  std::string unknown = setTransformerField(t, "depth", "1");
  EXPECT_NE(unknown.find("unknown model key `depth` (keys: layers, hidden,"), std::string::npos) << unknown;
  EXPECT_EQ(t.layers, 32);
}

} // namespace
} // namespace schedc::cost
