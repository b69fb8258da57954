// Operations — what sema needs beyond the operation table (support/ops/Operations.def,
// which gives every operation's signature: parameter names, kinds, defaults, results): the
// IR types of an operation's results, and the built-in integer functions and names.
#pragma once

#include "ir/IR.h"

#include <string_view>
#include <vector>

namespace schedc::sema {

// The results of `kind` as IR types; a result of its operand's type reads as Type::Value
// until the operation is bound to its arguments.
std::vector<ir::Type> resultTypes(OpKind kind);

// Built-in integer functions (`min`, `max`, `size`, `rank_at`), and their names.
bool isBuiltinFunction(std::string_view name);
const std::vector<std::string_view> &builtinFunctionNames();
// Names that cannot be redefined: `rank`, `ranks`, `layers`, `batches`.
// rank, ranks, layers, batches, and the memory tiers' names (tierNamed).
bool isBuiltinName(std::string_view name);

} // namespace schedc::sema
