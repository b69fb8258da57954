// HuggingFaceConfig implementation: the JSON parsed by nlohmann/json, each field looked up
// under its names in turn, and a problem placed at its key's line and column (nlohmann/json
// keeps no positions: the key's first occurrence in the text is searched for).
#include "cost/HuggingFaceConfig.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace schedc::cost {

namespace {

using Json = nlohmann::json;

// Line and column (from 1) of byte `offset` of `text`.
FileProblem at(const std::string &text, size_t offset, std::string message) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++line, column = 1;
    else
      ++column;
  }
  return {line, column, std::move(message)};
}

// Where `"key"` first stands in the text (the file as a whole when nowhere).
FileProblem atKey(const std::string &text, const std::string &key, std::string message) {
  size_t found = text.find("\"" + key + "\"");
  return found == std::string::npos ? FileProblem{0, 0, std::move(message)} : at(text, found, std::move(message));
}

class Reader {
public:
  Reader(const std::string &text, const Json &config, FileProblem &problem)
      : text_(text), config_(config), problem_(problem) {}

  bool failed() const { return !problem_.message.empty(); }
  const Json *find(std::initializer_list<const char *> names, std::string &found) const {
    for (const char *name : names)
      if (auto it = config_.find(name); it != config_.end() && !it->is_null()) {
        found = name;
        return &*it;
      }
    return nullptr;
  }
  // The positive integer under the first of `names` given; `fallback` when none is (-1: it
  // must be).
  int64_t integer(std::initializer_list<const char *> names, int64_t fallback, const char *what) {
    std::string name;
    const Json *v = find(names, name);
    if (!v) {
      if (fallback < 0 && !failed())
        problem_ = {0, 0, std::string(*names.begin()) + " is missing: a config.json gives the model's " + what};
      return fallback < 0 ? 1 : fallback;
    }
    if (!v->is_number_integer() || v->get<int64_t>() < 1) {
      if (!failed())
        problem_ = atKey(text_, name, name + " must be a whole number of at least 1, not " + v->dump());
      return 1;
    }
    return v->get<int64_t>();
  }
  // The same for a count that may be 0 (a number of experts, of dense layers, a rank).
  int64_t count(std::initializer_list<const char *> names, int64_t fallback) {
    std::string name;
    const Json *v = find(names, name);
    if (!v)
      return fallback;
    if (!v->is_number_integer() || v->get<int64_t>() < 0) {
      if (!failed())
        problem_ = atKey(text_, name, name + " must be a whole number of at least 0, not " + v->dump());
      return fallback;
    }
    return v->get<int64_t>();
  }
  bool boolean(const char *name, bool fallback) {
    auto it = config_.find(name);
    if (it == config_.end() || it->is_null())
      return fallback;
    if (!it->is_boolean()) {
      if (!failed())
        problem_ = atKey(text_, name, std::string(name) + " must be true or false, not " + it->dump());
      return fallback;
    }
    return it->get<bool>();
  }
  std::string text(const char *name) const {
    auto it = config_.find(name);
    return it != config_.end() && it->is_string() ? it->get<std::string>() : "";
  }
  bool has(const char *name) const { return config_.contains(name) && !config_[name].is_null(); }
  // A problem of its own at key `name` (the first one found is kept).
  void fail(const char *name, std::string message) {
    if (!failed())
      problem_ = atKey(text_, name, std::move(message));
  }
  bool positive(const char *name) const {
    auto it = config_.find(name);
    return it != config_.end() && it->is_number() && it->get<double>() > 0;
  }

private:
  const std::string &text_;
  const Json &config_;
  FileProblem &problem_;
};

} // namespace

bool looksLikeJson(const std::string &text) {
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      return c == '{';
  return false;
}

std::optional<Transformer> parseHuggingFaceConfig(const std::string &text, FileProblem &problem) {
  Json config;
  try {
    config = Json::parse(text);
  } catch (const Json::parse_error &e) {
    std::string what = e.what();
    size_t colon = what.rfind(": ");
    problem = at(text, e.byte > 0 ? e.byte - 1 : 0, what.substr(colon == std::string::npos ? 0 : colon + 2));
    return std::nullopt;
  }
  problem = {};
  Reader read(text, config, problem);
  const std::string type = read.text("model_type");
  const bool gpt2 = type == "gpt2";
  Transformer t;
  t.hidden = read.integer({"hidden_size", "n_embd"}, -1, "width (hidden_size)");
  t.layers = read.integer({"num_hidden_layers", "n_layer"}, -1, "depth (num_hidden_layers)");
  t.heads = read.integer({"num_attention_heads", "n_head"}, -1, "attention heads (num_attention_heads)");
  t.kvHeads = read.integer({"num_key_value_heads"}, t.heads, "key/value heads");
  t.ffn = read.integer({"intermediate_size", "n_inner"}, 4 * t.hidden, "MLP size");
  t.vocab = read.integer({"vocab_size"}, -1, "vocabulary (vocab_size)");
  t.sequence = read.integer({"max_position_embeddings", "n_positions"}, -1, "sequence (max_position_embeddings)");
  t.tiedEmbeddings = read.boolean("tie_word_embeddings", gpt2);
  const std::string act = read.text("hidden_act").empty() ? read.text("activation_function") : read.text("hidden_act");
  t.gatedMlp = act == "silu" || act == "swish";
  t.norm = read.has("rms_norm_eps") ? Norm::RmsNorm : Norm::LayerNorm;
  t.biases = gpt2 || type == "gpt_neox" || read.boolean("attention_bias", false) || read.boolean("mlp_bias", false);
  t.positionEmbeddings = gpt2;
  t.dropout = read.positive("attention_dropout") || read.positive("hidden_dropout") || read.positive("resid_pdrop") ||
              read.positive("attn_pdrop");
  t.flashAttention = true;
  // Mixture of experts: Mixtral's num_local_experts (each expert of intermediate_size),
  // DeepSeek's n_routed_experts, n_shared_experts, moe_intermediate_size and
  // first_k_dense_replace (its first layers dense, of intermediate_size), Qwen-MoE's
  // num_experts and its one shared expert of shared_expert_intermediate_size; and DeepSeek's
  // multi-head latent attention.
  t.experts = read.count({"num_local_experts", "n_routed_experts", "num_experts"}, 0);
  if (t.experts > 0) {
    t.topK = read.integer({"num_experts_per_tok"}, -1, "routed experts a token goes to (num_experts_per_tok)");
    t.expertFfn = read.integer({"moe_intermediate_size"}, t.ffn, "experts' size");
    t.sharedExperts = read.count({"n_shared_experts"}, 0);
    if (int64_t shared = read.count({"shared_expert_intermediate_size"}, 0); shared % t.expertFfn == 0)
      t.sharedExperts = std::max(t.sharedExperts, shared / t.expertFfn);
    else
      read.fail("shared_expert_intermediate_size",
                "shared_expert_intermediate_size (" + std::to_string(shared) + ") must be a multiple of the experts' " +
                    std::to_string(t.expertFfn) + ": the shared experts are counted as experts of that size");
    t.denseLayers = read.count({"first_k_dense_replace"}, 0);
  }
  t.kvLoraRank = read.count({"kv_lora_rank"}, 0);
  if (t.kvLoraRank > 0) {
    t.qLoraRank = read.count({"q_lora_rank"}, 0);
    t.qkNopeHeadDim = read.integer({"qk_nope_head_dim"}, -1, "latent attention's head size (qk_nope_head_dim)");
    t.qkRopeHeadDim = read.integer({"qk_rope_head_dim"}, -1, "latent attention's rotary size (qk_rope_head_dim)");
    t.vHeadDim = read.integer({"v_head_dim"}, -1, "latent attention's value size (v_head_dim)");
  }
  t.name = read.text("_name_or_path"); // none: the file's path names it
  if (read.failed())
    return std::nullopt;
  if (std::string wrong = t.invalid(); !wrong.empty()) {
    problem = {0, 0, wrong};
    // At the key of the field the problem names first (Transformer::invalid names its own
    // fields: "heads (3) must divide hidden (64)").
    struct Field {
      const char *name;
      std::initializer_list<const char *> keys;
    };
    const Field fields[] = {{"kv_heads", {"num_key_value_heads"}},
                            {"heads", {"num_attention_heads", "n_head"}},
                            {"hidden", {"hidden_size", "n_embd"}},
                            {"ffn", {"intermediate_size", "n_inner"}},
                            {"layers", {"num_hidden_layers", "n_layer"}},
                            {"vocab", {"vocab_size"}},
                            {"sequence", {"max_position_embeddings", "n_positions"}},
                            {"top_k", {"num_experts_per_tok"}},
                            {"shared_experts", {"shared_expert_intermediate_size", "n_shared_experts"}},
                            {"dense_layers", {"first_k_dense_replace"}}};
    for (const Field &f : fields)
      if (wrong.rfind(f.name, 0) == 0) {
        std::string key;
        if (read.find(f.keys, key))
          problem = atKey(text, key, wrong);
        break;
      }
    return std::nullopt;
  }
  return t;
}

} // namespace schedc::cost
