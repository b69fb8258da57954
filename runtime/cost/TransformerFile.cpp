// TransformerFile implementation: one table of the keys a model description may set, read
// from TOML nodes (toml++, header-only here) or from command-line text.
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
#include "cost/TransformerFile.h"

#include <toml++/toml.h>

#include <charconv>

namespace schedc::cost {

namespace {

enum class FieldType { Integer, Boolean, NormName, Text };

struct Field {
  const char *key;
  FieldType type;
  int64_t Transformer::*integer = nullptr;
  bool Transformer::*boolean = nullptr;
};

const Field kFields[] = {
    {"layers", FieldType::Integer, &Transformer::layers},
    {"hidden", FieldType::Integer, &Transformer::hidden},
    {"heads", FieldType::Integer, &Transformer::heads},
    {"kv_heads", FieldType::Integer, &Transformer::kvHeads},
    {"ffn", FieldType::Integer, &Transformer::ffn},
    {"vocab", FieldType::Integer, &Transformer::vocab},
    {"sequence", FieldType::Integer, &Transformer::sequence},
    {"micro_batch", FieldType::Integer, &Transformer::microBatch},
    {"gated_mlp", FieldType::Boolean, nullptr, &Transformer::gatedMlp},
    {"biases", FieldType::Boolean, nullptr, &Transformer::biases},
    {"tied_embeddings", FieldType::Boolean, nullptr, &Transformer::tiedEmbeddings},
    {"position_embeddings", FieldType::Boolean, nullptr, &Transformer::positionEmbeddings},
    {"dropout", FieldType::Boolean, nullptr, &Transformer::dropout},
    {"flash_attention", FieldType::Boolean, nullptr, &Transformer::flashAttention},
    {"norm", FieldType::NormName},
    {"name", FieldType::Text},
};

const Field *fieldOf(std::string_view key) {
  for (const Field &f : kFields)
    if (key == f.key)
      return &f;
  return nullptr;
}

// "layers, hidden, ...": the keys a file or a command line may set.
std::string keyNames() {
  std::string names;
  for (const Field &f : kFields)
    names += (names.empty() ? "" : ", ") + std::string(f.key);
  return names;
}

// Sets `f` of `model` to an already typed value; "" or what is wrong with it.
std::string setInteger(Transformer &model, const Field &f, int64_t v) {
  if (v < 1)
    return std::string(f.key) + " is " + std::to_string(v) + "; it must be at least 1";
  model.*f.integer = v;
  return "";
}

std::string setNorm(Transformer &model, std::string_view v) {
  if (v != "layernorm" && v != "rmsnorm")
    return "norm is `" + std::string(v) + "`; expected layernorm or rmsnorm";
  model.norm = v == "rmsnorm" ? Norm::RmsNorm : Norm::LayerNorm;
  return "";
}

const char *typeName(FieldType t) {
  switch (t) {
  case FieldType::Integer: return "an integer";
  case FieldType::Boolean: return "true or false";
  case FieldType::NormName:
  case FieldType::Text: return "a string";
  }
  return "";
}

// Sets one field from a TOML node; "" or what is wrong.
std::string setFromNode(Transformer &model, const Field &f, const toml::node &node) {
  switch (f.type) {
  case FieldType::Integer:
    if (auto v = node.value_exact<int64_t>())
      return setInteger(model, f, *v);
    break;
  case FieldType::Boolean:
    if (auto v = node.value_exact<bool>()) {
      model.*f.boolean = *v;
      return "";
    }
    break;
  case FieldType::NormName:
    if (auto v = node.value_exact<std::string>())
      return setNorm(model, *v);
    break;
  case FieldType::Text:
    if (auto v = node.value_exact<std::string>()) {
      model.name = *v;
      return "";
    }
    break;
  }
  return std::string(f.key) + " must be " + typeName(f.type);
}

TransformerProblem at(const toml::source_region &where, std::string message) {
  return {static_cast<int>(where.begin.line), static_cast<int>(where.begin.column), std::move(message)};
}

} // namespace

std::optional<Transformer> parseTransformer(const std::string &text, TransformerProblem &problem) {
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error &e) {
    problem = at(e.source(), std::string(e.description()));
    return std::nullopt;
  }
  Transformer model;
  if (const toml::node *preset = table.get("preset")) {
    auto name = preset->value_exact<std::string>();
    const Transformer *base = name ? findTransformerPreset(*name) : nullptr;
    if (!base) {
      problem = at(preset->source(), name ? "unknown preset `" + *name + "` (presets: " + transformerPresetNames() + ")"
                                          : std::string("preset must be a string"));
      return std::nullopt;
    }
    model = *base;
  }
  for (const auto &[key, node] : table) {
    if (key.str() == "preset")
      continue;
    const Field *f = fieldOf(key.str());
    if (!f) {
      problem = at(key.source(), "unknown key `" + std::string(key.str()) + "` (keys: preset, " + keyNames() + ")");
      return std::nullopt;
    }
    if (std::string wrong = setFromNode(model, *f, node); !wrong.empty()) {
      problem = at(node.source(), wrong);
      return std::nullopt;
    }
  }
  if (!table.get("preset")) { // a model of its own: the usual defaults
    if (model.kvHeads == 0)
      model.kvHeads = model.heads;
    if (model.ffn == 0)
      model.ffn = 4 * model.hidden;
  }
  if (std::string wrong = model.invalid(); !wrong.empty()) {
    problem = {0, 0, wrong};
    return std::nullopt;
  }
  return model;
}

std::string setTransformerField(Transformer &model, const std::string &key, const std::string &value) {
  const Field *f = fieldOf(key);
  if (!f)
    return "unknown model key `" + key + "` (keys: " + keyNames() + ")";
  switch (f->type) {
  case FieldType::Integer: {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size())
      return key + " must be an integer, not `" + value + "`";
    return setInteger(model, *f, v);
  }
  case FieldType::Boolean:
    if (value != "true" && value != "false")
      return key + " must be true or false, not `" + value + "`";
    model.*f->boolean = value == "true";
    return "";
  case FieldType::NormName: return setNorm(model, value);
  case FieldType::Text: model.name = value; return "";
  }
  return "";
}

} // namespace schedc::cost
