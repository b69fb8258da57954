// Transformer presets, each with where its numbers come from. The parameter counts they
// imply are checked against the published ones (test/unit/TransformerTest.cpp).
#include "cost/DescriptionFile.h"
#include "cost/Transformer.h"

namespace schedc::cost {

namespace {

// GPT-3 175B: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (96
// layers, d_model 12 288, 96 heads, context 2048); GPT-2's architecture and vocabulary of
// 50 257 (Radford et al. 2019): LayerNorm, biases, learned positions, tied embeddings, FFN
// 4 x d_model. 174.6 B parameters.
Transformer gpt3() {
  Transformer t;
  t.name = "gpt3-175b";
  t.layers = 96, t.hidden = 12288, t.heads = 96, t.kvHeads = 96, t.ffn = 4 * 12288, t.vocab = 50257;
  t.sequence = 2048;
  t.biases = true, t.norm = Norm::LayerNorm, t.tiedEmbeddings = true, t.positionEmbeddings = true, t.dropout = true;
  return t;
}

// The Megatron-LM configurations of Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", Table 3 (heads, hidden size, layers; sequence
// 2048), the GPT architecture of Megatron-LM with dropout and its GPT-2 vocabulary padded to
// 51 200 (a multiple of 128 x the tensor-parallel size 8, as Megatron-LM pads it); Narayanan
// et al. 2021, Table 1, lists 529.6 B and 1008.0 B parameters for the last two.
Transformer megatron(const char *name, int64_t heads, int64_t hidden, int64_t layers) {
  Transformer t = gpt3();
  t.name = name;
  t.layers = layers, t.hidden = hidden, t.heads = heads, t.kvHeads = heads, t.ffn = 4 * hidden, t.vocab = 51200;
  return t;
}

// Llama 3: Llama Team 2024, "The Llama 3 Herd of Models", Table 3 (layers, model dimension,
// FFN dimension, attention heads, 8 key/value heads, vocabulary 128 000 — 128 256 in the
// released configurations — and sequence 8192 for pre-training); SwiGLU, RMSNorm, no biases,
// rotary positions, untied embeddings, no dropout. 8.03 B, 70.6 B and 405.9 B parameters.
// FlashAttention on, as Llama 3 trains and as torchtitan and Megatron-LM run it by default
// (PyTorch's scaled_dot_product_attention; --use-flash-attn): the scores never leave the
// kernel. (The GPT-3 and Megatron presets reproduce papers written before it, so off.)
Transformer llama3(const char *name, int64_t layers, int64_t hidden, int64_t ffn, int64_t heads) {
  Transformer t;
  t.name = name;
  t.layers = layers, t.hidden = hidden, t.heads = heads, t.kvHeads = 8, t.ffn = ffn, t.vocab = 128256;
  t.sequence = 8192;
  t.gatedMlp = true, t.norm = Norm::RmsNorm;
  t.flashAttention = true;
  return t;
}

// Mixtral 8x7B: Jiang et al. 2024, "Mixtral of Experts", Table 1 (dim 4096, 32 layers, head
// dim 128, hidden dim 14 336, 32 heads, 8 KV heads, vocabulary 32 000, 8 experts, top 2);
// Mistral 7B's architecture otherwise (RMSNorm, SwiGLU experts, rotary positions, untied
// embeddings, no biases). Its context is 32 768; the preset trains on 4 096-token sequences
// (--model-set=sequence=32768 for the whole context). 46.7 B parameters, 12.9 B active (§2).
Transformer mixtral() {
  Transformer t = llama3("mixtral-8x7b", 32, 4096, 14336, 32);
  t.vocab = 32000, t.sequence = 4096;
  t.experts = 8, t.topK = 2, t.expertFfn = 14336;
  return t;
}

// DeepSeek-V3: DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", §4.2 (61 layers, hidden
// 7168, 128 heads of 128, KV compression 512, query compression 1536, decoupled rotary
// dimension 64; the first three layers dense, the rest 1 shared and 256 routed experts of
// intermediate size 2048, 8 of them per token; pre-training sequence 4K) and its released
// config.json (vocabulary 129 280, the dense layers' intermediate size 18 432, untied
// embeddings). The multi-token-prediction module is not counted, as the report's 671 B
// parameters (37 B active) do not count it.
Transformer deepseekV3() {
  Transformer t = llama3("deepseek-v3", 61, 7168, 18432, 128);
  t.kvHeads = 128, t.vocab = 129280, t.sequence = 4096;
  t.experts = 256, t.topK = 8, t.expertFfn = 2048, t.sharedExperts = 1, t.denseLayers = 3;
  t.qLoraRank = 1536, t.kvLoraRank = 512, t.qkNopeHeadDim = 128, t.qkRopeHeadDim = 64, t.vHeadDim = 128;
  return t;
}

} // namespace

const std::vector<Transformer> &transformerPresets() {
  static const std::vector<Transformer> presets{
      gpt3(),
      llama3("llama3-8b", 32, 4096, 14336, 32),
      llama3("llama3-70b", 80, 8192, 28672, 64),
      llama3("llama3-405b", 126, 16384, 53248, 128),
      megatron("megatron-22b", 64, 6144, 48),
      megatron("megatron-175b", 96, 12288, 96),
      megatron("megatron-530b", 128, 20480, 105),
      megatron("megatron-1t", 160, 25600, 128),
      mixtral(),
      deepseekV3(),
  };
  return presets;
}

const Transformer *findTransformerPreset(const std::string &name) {
  return findNamed(transformerPresets(), name);
}

std::string transformerPresetNames() {
  return namesOf(transformerPresets());
}

} // namespace schedc::cost
