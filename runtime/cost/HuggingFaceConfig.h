// HuggingFaceConfig — a Hugging Face `config.json` as a model description (`--model=
// path/config.json`), since that is the file a model's users have. Read with nlohmann/json
// (Debian's nlohmann-json3-dev), field names as transformers' configuration classes spell
// them for Llama, Mistral, Qwen2, GPT-NeoX and GPT-2:
//   hidden       hidden_size | n_embd
//   layers       num_hidden_layers | n_layer
//   heads        num_attention_heads | n_head
//   kv_heads     num_key_value_heads (absent: heads, multi-head attention)
//   ffn          intermediate_size | n_inner (null or absent on GPT-2: 4 x hidden)
//   vocab        vocab_size
//   sequence     max_position_embeddings | n_positions (override with --model-set)
//   tied         tie_word_embeddings (absent: true for GPT-2, false otherwise, as the
//                classes default)
//   gated MLP    hidden_act silu or swish (SwiGLU: gate, up and down matrices)
//   norm         RMSNorm where rms_norm_eps is given, LayerNorm otherwise
//   biases       GPT-2 and GPT-NeoX (model_type gpt2, gpt_neox); Llama's attention_bias or
//                mlp_bias; not Qwen2's Q, K, V biases ((h + 2·kv) a layer: under 0.01%)
//   positions    learned (n_positions x hidden) for GPT-2, rotary otherwise
//   dropout      any of attention_dropout, hidden_dropout, resid_pdrop, attn_pdrop above 0
//   name         _name_or_path, else the file's path
// FlashAttention is on, as for the Llama presets. A missing or mistyped field is an error
// at the line and column of its key (or of the file, for a missing one).
#pragma once

#include "cost/DescriptionFile.h"
#include "cost/Transformer.h"

#include <optional>
#include <string>

namespace schedc::cost {

// Whether `text` is JSON (its first non-blank character is `{`), which no TOML file is.
bool looksLikeJson(const std::string &text);
// The model a config.json describes, or nullopt with `problem` set.
std::optional<Transformer> parseHuggingFaceConfig(const std::string &text, FileProblem &problem);

} // namespace schedc::cost
