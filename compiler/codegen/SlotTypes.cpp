// SlotTypes implementation: the lets of every nested block (ir/Walk.h).
#include "codegen/SlotTypes.h"

#include "ir/Walk.h"

namespace schedc::codegen {

std::vector<ir::Type> slotTypes(const ir::Function &f) {
  std::vector<ir::Type> types(f.slotNames.size(), ir::Type::Int);
  ir::forEachStatement(f.body, [&](const ir::Stmt &s) {
    if (auto *x = std::get_if<ir::LetStmt>(&s.node))
      types[x->slot] = x->value.type;
  });
  return types;
}

} // namespace schedc::codegen
