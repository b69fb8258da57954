// TransformerFile — a model description in a TOML file, and settings from the command line.
// A file names the preset it starts from (`preset = "llama3-70b"`; none: every field must be
// given) and sets any field by its key:
//   layers hidden heads kv_heads ffn vocab sequence micro_batch   integers >= 1
//   gated_mlp biases tied_embeddings position_embeddings dropout flash_attention
//   main_grad_buffer                                                           booleans
//   norm ("layernorm" or "rmsnorm"), recompute ("none", "selective" or "full"), name (a string)
// kv_heads defaults to heads and ffn to 4 x hidden when a file without a preset omits them.
// Read through DescriptionFile (toml++). Every problem is located: the file's line and
// column of the key or value at fault.
#pragma once

#include "cost/DescriptionFile.h"
#include "cost/Transformer.h"

#include <optional>
#include <string>

namespace schedc::cost {

// The model `text` (the contents of a TOML file, or of a Hugging Face config.json:
// cost/HuggingFaceConfig.h) describes, or nullopt with `problem` set.
std::optional<Transformer> parseTransformer(const std::string &text, FileProblem &problem);

// Sets `key` (one of the file's keys) of `model` from `value` as a command line gives it
// ("80", "true", "rmsnorm"); "" if done, else what is wrong.
std::string setTransformerField(Transformer &model, const std::string &key, const std::string &value);

} // namespace schedc::cost
