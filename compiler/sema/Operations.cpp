// Operations: result types from the operation table, and the built-in functions.
#include "sema/Operations.h"

#include <algorithm>

namespace schedc::sema {

std::vector<ir::Type> resultTypes(OpKind kind) {
  std::vector<ir::Type> types;
  for (SigType t : opInfo(kind).results)
    types.push_back(t == SigType::Operand ? ir::Type::Value : ir::typeOf(t));
  return types;
}

const std::vector<std::string_view> &builtinFunctionNames() {
  static const std::vector<std::string_view> names = {"min", "max", "size", "rank_at", "held"};
  return names;
}

bool isBuiltinFunction(std::string_view name) {
  const std::vector<std::string_view> &names = builtinFunctionNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool isBuiltinName(std::string_view name) {
  return name == "rank" || name == "ranks" || name == "layers" || name == "batches" || tierNamed(name);
}

} // namespace schedc::sema
