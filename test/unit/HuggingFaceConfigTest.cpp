// Unit tests of Hugging Face config.json files as models (cost/HuggingFaceConfig): the
// published parameter counts of Llama 3 8B (the preset's, field for field), Mistral 7B,
// GPT-NeoX-20B and GPT-2 from their configurations' fields, and every problem located.
#include "cost/HuggingFaceConfig.h"
#include "DescriptionProblems.h"
#include "cost/TransformerFile.h"

#include <gtest/gtest.h>

namespace schedc::cost {
namespace {

std::optional<Transformer> read(const std::string &text) {
  FileProblem problem;
  std::optional<Transformer> t = parseTransformer(text, problem);
  EXPECT_TRUE(t) << problem.line << ":" << problem.column << ": " << problem.message;
  return t;
}

// meta-llama/Meta-Llama-3-8B's config.json (its model fields).
const char *kLlama3 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
  "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 128256
})";

TEST(HuggingFaceConfig, Llama3IsThePreset) {
  auto t = read(kLlama3);
  ASSERT_TRUE(t);
  Transformer preset = *findTransformerPreset("llama3-8b");
  EXPECT_EQ(t->parameters(), preset.parameters());
  EXPECT_EQ(t->parameters(), 8030261248);
  EXPECT_EQ(t->layers, preset.layers);
  EXPECT_EQ(t->kvHeads, 8);
  EXPECT_EQ(t->ffn, preset.ffn);
  EXPECT_EQ(t->sequence, preset.sequence);
  EXPECT_TRUE(t->gatedMlp);
  EXPECT_EQ(t->norm, Norm::RmsNorm);
  EXPECT_FALSE(t->biases || t->tiedEmbeddings || t->positionEmbeddings || t->dropout);
  EXPECT_TRUE(t->flashAttention);
  EXPECT_EQ(t->name, ""); // the file's path names it
  for (int64_t l : {int64_t{0}, int64_t{7}, int64_t{31}})
    EXPECT_EQ(t->forwardFlops(l), preset.forwardFlops(l));
}

TEST(HuggingFaceConfig, PublishedParameterCounts) {
  // mistralai/Mistral-7B-v0.1: 7 241 732 096.
  auto mistral = read(R"({"model_type": "mistral", "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
    "tie_word_embeddings": false, "vocab_size": 32000, "_name_or_path": "mistral-7b"})");
  ASSERT_TRUE(mistral);
  EXPECT_EQ(mistral->parameters(), 7241732096);
  EXPECT_EQ(mistral->name, "mistral-7b");
  // EleutherAI/gpt-neox-20b: LayerNorm, biases, rotary, untied: 20 554 567 680.
  auto neox = read(R"({"model_type": "gpt_neox", "hidden_act": "gelu", "hidden_size": 6144,
    "intermediate_size": 24576, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
    "num_attention_heads": 64, "num_hidden_layers": 44, "tie_word_embeddings": false,
    "vocab_size": 50432})");
  ASSERT_TRUE(neox);
  EXPECT_EQ(neox->parameters(), 20554567680);
  EXPECT_FALSE(neox->gatedMlp);
  EXPECT_TRUE(neox->biases);
  // gpt2: n_* names, n_inner null (4 x n_embd), learned positions, tied: 124 439 808.
  auto gpt2 = read(R"({"activation_function": "gelu_new", "attn_pdrop": 0.1, "model_type": "gpt2",
    "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_inner": null, "n_layer": 12, "n_positions": 1024,
    "resid_pdrop": 0.1, "layer_norm_epsilon": 1e-05, "vocab_size": 50257})");
  ASSERT_TRUE(gpt2);
  EXPECT_EQ(gpt2->parameters(), 124439808);
  EXPECT_TRUE(gpt2->tiedEmbeddings && gpt2->positionEmbeddings && gpt2->dropout);
  EXPECT_EQ(gpt2->norm, Norm::LayerNorm);
}

// Mixture-of-experts configurations: mistralai/Mixtral-8x7B-v0.1's and
// deepseek-ai/DeepSeek-V3's config.json (their model fields) give the presets' counts.
TEST(HuggingFaceConfig, MixtureOfExpertsConfigsAreThePresets) {
  auto mixtral = read(R"({"architectures": ["MixtralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mixtral",
    "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "vocab_size": 32000})");
  ASSERT_TRUE(mixtral);
  EXPECT_EQ(mixtral->parameters(), findTransformerPreset("mixtral-8x7b")->parameters());
  EXPECT_EQ(mixtral->activeParameters(), findTransformerPreset("mixtral-8x7b")->activeParameters());
  auto deepseek = read(R"({"architectures": ["DeepseekV3ForCausalLM"], "first_k_dense_replace": 3,
    "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
    "max_position_embeddings": 163840, "model_type": "deepseek_v3", "moe_intermediate_size": 2048,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06, "tie_word_embeddings": false,
    "v_head_dim": 128, "vocab_size": 129280})");
  ASSERT_TRUE(deepseek);
  EXPECT_EQ(deepseek->parameters(), findTransformerPreset("deepseek-v3")->parameters());
  EXPECT_EQ(deepseek->activeParameters(), findTransformerPreset("deepseek-v3")->activeParameters());
  // Qwen1.5-MoE-A2.7B: 60 experts of 1408, top 4, one shared expert of 5632 (four experts' size).
  auto qwen = read(R"({"model_type": "qwen2_moe", "hidden_act": "silu", "hidden_size": 2048,
    "intermediate_size": 5632, "max_position_embeddings": 8192, "moe_intermediate_size": 1408,
    "num_attention_heads": 16, "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24,
    "num_key_value_heads": 16, "rms_norm_eps": 1e-06, "shared_expert_intermediate_size": 5632,
    "tie_word_embeddings": false, "vocab_size": 151936})");
  ASSERT_TRUE(qwen);
  EXPECT_EQ(qwen->sharedExperts, 4);
  // Published: 14.3 B parameters, 2.7 B active (Qwen Team 2024, "Qwen1.5-MoE"); its Q, K, V
  // biases and shared expert's gate are not read (under 0.01%).
  EXPECT_NEAR(static_cast<double>(qwen->parameters()) / 14.3e9, 1, 0.01);
  EXPECT_NEAR(static_cast<double>(qwen->activeParameters()) / 2.7e9, 1, 0.01);
}

TEST(HuggingFaceConfig, ProblemsAreLocated) {
  expectProblems(parseTransformer,
                 {
                     ProblemCase{"{\n  \"hidden_size\": 4096,\n  \"num_hidden_layers\": 32\n", 4, 1,
                                 "syntax error while parsing object - unexpected end of input; expected '}'"},
                     ProblemCase{"{\n  \"hidden_size\": 4096,,\n}\n", 2, 23, "unexpected ','; expected string literal"},
                     ProblemCase{"{\"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"vocab_size\": 10, "
                                 "\"max_position_embeddings\": 8}",
                                 0, 0, "hidden_size is missing: a config.json gives the model's width (hidden_size)"},
                     ProblemCase{"{\n\"hidden_size\": \"4096\", \"num_hidden_layers\": 2}", 2, 1,
                                 "hidden_size must be a whole number of at least 1, not \"4096\""},
                     ProblemCase{"{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,\n"
                                 "\"vocab_size\": 10, \"max_position_embeddings\": 8, \"tie_word_embeddings\": 1}",
                                 2, 49, "tie_word_embeddings must be true or false, not 1"},
                     ProblemCase{"{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 3, "
                                 "\"vocab_size\": 10, \"max_position_embeddings\": 8}",
                                 1, 45, "heads (3) must divide hidden (64)"},
                     ProblemCase{"{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
                                 "\"vocab_size\": 10, \"max_position_embeddings\": 8, \"num_local_experts\": 4}",
                                 0, 0,
                                 "num_experts_per_tok is missing: a config.json gives the model's routed experts a "
                                 "token goes to (num_experts_per_tok)"},
                     ProblemCase{"{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
                                 "\"vocab_size\": 10, \"max_position_embeddings\": 8, \"num_experts\": 4,\n"
                                 "\"num_experts_per_tok\": 1, \"moe_intermediate_size\": 32, "
                                 "\"shared_expert_intermediate_size\": 48}",
                                 2, 56,
                                 "shared_expert_intermediate_size (48) must be a multiple of the experts' 32: the "
                                 "shared experts are counted as experts of that size"},
                     ProblemCase{"{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
                                 "\"vocab_size\": 10, \"max_position_embeddings\": 8, \"num_experts\": 4,\n"
                                 "\"num_experts_per_tok\": 1, \"first_k_dense_replace\": -1}",
                                 2, 27, "first_k_dense_replace must be a whole number of at least 0, not -1"},
                 });
}

} // namespace
} // namespace schedc::cost
