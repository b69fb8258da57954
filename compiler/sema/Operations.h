// Operations — the signature of every built-in operation of the language (`load`, `forward`,
// `allreduce`, `send`, ...): parameter names, what kind of argument each takes, defaults, and
// the kinds of values it yields. Sema binds call arguments against these signatures, so
// arity, argument names and operand kinds are checked in one place.
#pragma once

#include "ir/IR.h"

#include <string_view>
#include <vector>

namespace schedc::sema {

enum class ArgKind {
  Int,   // an integer expression
  Set,   // a set expression
  Value, // a training value of type `type` (or Type::Value: any)
  Group, // a set of ranks or a mesh axis
};

struct OpParam {
  const char *name;
  ArgKind kind;
  ir::Type type = ir::Type::Int;                    // for Value
  std::optional<int64_t> intDefault = std::nullopt; // optional Int parameters
  bool optional = false;
};

struct OpSignature {
  const char *name;
  ir::OpKind kind;
  std::vector<OpParam> params;
  std::vector<ir::Type> results;
  bool isSend = false; // `send` is a statement, not an ir::Operation
};

// Looks up an operation by name (`scatterreduce` is an alias of `reducescatter`).
const OpSignature *findOperation(std::string_view name);
// All operation names, for "did you mean" suggestions.
std::vector<std::string_view> operationNames();

// Built-in integer functions (`min`, `max`, `size`, `rank_at`), and their names.
bool isBuiltinFunction(std::string_view name);
const std::vector<std::string_view> &builtinFunctionNames();
// Names that cannot be redefined: `rank`, `ranks`, `layers`, `batches`.
bool isBuiltinName(std::string_view name);

} // namespace schedc::sema
