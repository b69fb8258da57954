// Operations: the signature table.
#include "sema/Operations.h"

#include <algorithm>

namespace schedc::sema {

namespace {

using ir::OpKind;
using ir::Type;

const std::vector<OpSignature> &table() {
  // backward and its two halves take the same arguments.
  static const std::vector<OpParam> backwardParams = {{"layer", ArgKind::Int},
                                                      {"input", ArgKind::Value, Type::Activation},
                                                      {"grad", ArgKind::Value, Type::ActGrad},
                                                      {"weight", ArgKind::Value, Type::Weight}};
  static const std::vector<OpSignature> ops = {
      {"load",
       OpKind::Load,
       {{"layer", ArgKind::Int}, {"shard", ArgKind::Int, Type::Int, 0, true}, {"of", ArgKind::Int, Type::Int, 1, true}},
       {Type::Weight, Type::OptState}},
      {"input", OpKind::Input, {{"batches", ArgKind::Set}}, {Type::Activation}},
      {"forward",
       OpKind::Forward,
       {{"layer", ArgKind::Int}, {"input", ArgKind::Value, Type::Activation}, {"weight", ArgKind::Value, Type::Weight}},
       {Type::Activation}},
      {"backward", OpKind::Backward, backwardParams, {Type::WeightGrad, Type::ActGrad}},
      {"backward_input", OpKind::BackwardInput, backwardParams, {Type::ActGrad}},
      {"backward_weight", OpKind::BackwardWeight, backwardParams, {Type::WeightGrad}},
      {"loss", OpKind::Loss, {{"input", ArgKind::Value, Type::Activation}}, {Type::ActGrad}},
      {"update",
       OpKind::Update,
       {{"layer", ArgKind::Int},
        {"grad", ArgKind::Value, Type::WeightGrad},
        {"weight", ArgKind::Value, Type::Weight},
        {"opt", ArgKind::Value, Type::OptState}},
       {Type::Weight, Type::OptState}},
      {"allreduce",
       OpKind::AllReduce,
       {{"grad", ArgKind::Value, Type::WeightGrad}, {"group", ArgKind::Group, Type::Int, std::nullopt, true}},
       {Type::WeightGrad}},
      {"allgather",
       OpKind::AllGather,
       {{"weight", ArgKind::Value, Type::Weight}, {"group", ArgKind::Group, Type::Int, std::nullopt, true}},
       {Type::Weight}},
      {"reducescatter",
       OpKind::ReduceScatter,
       {{"grad", ArgKind::Value, Type::WeightGrad}, {"group", ArgKind::Group, Type::Int, std::nullopt, true}},
       {Type::WeightGrad}},
      {"recv", OpKind::Recv, {{"from", ArgKind::Int}, {"tag", ArgKind::Int, Type::Int, 0, true}}, {Type::Value}},
      {"fake_grad", OpKind::FakeGrad, {{"layer", ArgKind::Int}, {"batches", ArgKind::Set}}, {Type::WeightGrad}},
      {"shard",
       OpKind::Shard,
       {{"value", ArgKind::Value, Type::Value}, {"shard", ArgKind::Int}, {"of", ArgKind::Int}},
       {Type::Value}},
      {"send",
       OpKind::Read,
       {{"to", ArgKind::Int}, {"value", ArgKind::Value, Type::Value}, {"tag", ArgKind::Int, Type::Int, 0, true}},
       {},
       true},
  };
  return ops;
}

} // namespace

const OpSignature *findOperation(std::string_view name) {
  if (name == "scatterreduce")
    name = "reducescatter";
  for (const OpSignature &s : table())
    if (name == s.name)
      return &s;
  return nullptr;
}

std::vector<std::string_view> operationNames() {
  std::vector<std::string_view> names;
  for (const OpSignature &s : table())
    names.push_back(s.name);
  names.push_back("scatterreduce");
  return names;
}

const std::vector<std::string_view> &builtinFunctionNames() {
  static const std::vector<std::string_view> names = {"min", "max", "size", "rank_at"};
  return names;
}

bool isBuiltinFunction(std::string_view name) {
  const std::vector<std::string_view> &names = builtinFunctionNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool isBuiltinName(std::string_view name) {
  return name == "rank" || name == "ranks" || name == "layers" || name == "batches";
}

} // namespace schedc::sema
