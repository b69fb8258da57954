// CallGraph implementation: walks of the IR's statement trees for CallStmt.
#include "codegen/CallGraph.h"

#include "ir/Walk.h"

#include <functional>
#include <set>

namespace schedc::codegen {

namespace {

// Calls `onCall` with the callee of every call in `block`, nested blocks included.
void forEachCall(const ir::Block &block, const std::function<void(uint32_t)> &onCall) {
  ir::forEachStatement(block, [&](const ir::Stmt &s) {
    if (auto *x = std::get_if<ir::CallStmt>(&s.node))
      onCall(x->callee);
  });
}

} // namespace

std::vector<uint32_t> reachableFunctions(const ir::Program &program, uint32_t entry) {
  std::vector<uint32_t> order{entry};
  std::set<uint32_t> seen{entry};
  for (size_t i = 0; i < order.size(); ++i)
    forEachCall(program.functions[order[i]].body, [&](uint32_t callee) {
      if (seen.insert(callee).second)
        order.push_back(callee);
    });
  return order;
}

} // namespace schedc::codegen
