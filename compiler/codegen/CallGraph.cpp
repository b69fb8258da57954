// CallGraph implementation: walks of the IR's statement trees for CallStmt.
#include "codegen/CallGraph.h"

#include <functional>
#include <set>

namespace schedc::codegen {

namespace {

// Calls `onCall` with the callee of every call in `block`, nested blocks included.
void forEachCall(const ir::Block &block, const std::function<void(uint32_t)> &onCall) {
  for (const ir::Stmt &s : block) {
    if (auto *x = std::get_if<ir::CallStmt>(&s.node)) {
      onCall(x->callee);
    } else if (auto *x = std::get_if<ir::IfStmt>(&s.node)) {
      forEachCall(x->then, onCall);
      forEachCall(x->otherwise, onCall);
    } else if (auto *x = std::get_if<ir::ForStmt>(&s.node)) {
      forEachCall(x->body, onCall);
    } else if (auto *x = std::get_if<ir::OverlapStmt>(&s.node)) {
      forEachCall(x->first, onCall);
      forEachCall(x->second, onCall);
    } else if (auto *x = std::get_if<ir::GroupStmt>(&s.node)) {
      forEachCall(x->body, onCall);
    } else if (auto *x = std::get_if<ir::TableStmt>(&s.node)) {
      for (const ir::TableStmt::Shape &shape : *x->shapes)
        forEachCall(shape.body, onCall);
    }
  }
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
