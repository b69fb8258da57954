// TransformerFile implementation: the table of the keys a model description may set, read
// through DescriptionFile (the TOML file, or command-line text).
#include "cost/TransformerFile.h"
#include "cost/HuggingFaceConfig.h"

#include "cost/DescriptionFile.h"

namespace schedc::cost {

namespace {

using T = Transformer;

std::string setNorm(Transformer &model, const Setting &s) {
  if (s.text != "layernorm" && s.text != "rmsnorm")
    return "norm is `" + s.text + "`; expected layernorm or rmsnorm";
  model.norm = s.text == "rmsnorm" ? Norm::RmsNorm : Norm::LayerNorm;
  return "";
}

std::string setName(Transformer &model, const Setting &s) {
  model.name = s.text;
  return "";
}

std::string setRecompute(Transformer &model, const Setting &s) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (s.text == recomputeName(r)) {
      model.recompute = r;
      return "";
    }
  return "recompute is `" + s.text + "`; it is none, selective (attention's core) or full (every layer from its input)";
}

// A count that may be 0 (no experts, no dense layers, no query compression): Transformer::
// invalid() names a negative one.
template <int64_t Transformer::*Member> std::string setCount(Transformer &model, const Setting &s) {
  model.*Member = s.integer;
  return "";
}

constexpr SettingType kInteger = SettingType::Integer, kBoolean = SettingType::Boolean, kText = SettingType::Text;

const Key<T> kKeys[] = {
    {"layers", kInteger, &T::layers},
    {"hidden", kInteger, &T::hidden},
    {"heads", kInteger, &T::heads},
    {"kv_heads", kInteger, &T::kvHeads},
    {"ffn", kInteger, &T::ffn},
    {"vocab", kInteger, &T::vocab},
    {"sequence", kInteger, &T::sequence},
    {"micro_batch", kInteger, &T::microBatch},
    {"gated_mlp", kBoolean, nullptr, &T::gatedMlp},
    {"biases", kBoolean, nullptr, &T::biases},
    {"tied_embeddings", kBoolean, nullptr, &T::tiedEmbeddings},
    {"position_embeddings", kBoolean, nullptr, &T::positionEmbeddings},
    {"dropout", kBoolean, nullptr, &T::dropout},
    {"flash_attention", kBoolean, nullptr, &T::flashAttention},
    {"recompute", kText, nullptr, nullptr, nullptr, 1, setRecompute},
    {"main_grad_buffer", kBoolean, nullptr, &T::mainGradBuffer},
    {"tensor_parallel", SettingType::Integer, &T::tensorParallel},
    {"sequence_parallel", kBoolean, nullptr, &T::sequenceParallel},
    {"norm", kText, nullptr, nullptr, nullptr, 1, setNorm},
    {"experts", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::experts>},
    {"top_k", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::topK>},
    {"expert_ffn", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::expertFfn>},
    {"shared_experts", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::sharedExperts>},
    {"dense_layers", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::denseLayers>},
    {"capacity_factor", SettingType::Number, nullptr, nullptr, &T::capacityFactor},
    {"q_lora_rank", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::qLoraRank>},
    {"kv_lora_rank", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::kvLoraRank>},
    {"qk_nope_head_dim", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::qkNopeHeadDim>},
    {"qk_rope_head_dim", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::qkRopeHeadDim>},
    {"v_head_dim", kInteger, nullptr, nullptr, nullptr, 1, setCount<&T::vHeadDim>},
    {"name", kText, nullptr, nullptr, nullptr, 1, setName},
};

} // namespace

std::optional<Transformer> parseTransformer(const std::string &text, FileProblem &problem) {
  if (looksLikeJson(text))
    return parseHuggingFaceConfig(text, problem);
  std::optional<Transformer> model =
      readDescription<T>(text, kKeys, findTransformerPreset, transformerPresetNames(), problem);
  if (!model)
    return std::nullopt;
  if (model->kvHeads == 0) // a model of its own (every preset sets these): the usual defaults
    model->kvHeads = model->heads;
  if (model->ffn == 0)
    model->ffn = 4 * model->hidden;
  if (std::string wrong = model->invalid(); !wrong.empty()) {
    problem = {0, 0, wrong};
    return std::nullopt;
  }
  return model;
}

std::string setTransformerField(Transformer &model, const std::string &key, const std::string &value) {
  return setFromText<T>(model, kKeys, key, value, "model");
}

} // namespace schedc::cost
