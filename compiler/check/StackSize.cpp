// StackSize implementation: the levels of each function computed callees first (sema has
// made the calls acyclic and recorded each function's call height), so no recursion follows
// a chain of calls; within a function the walk recurses over its blocks and expressions.
#include "check/StackSize.h"

#include "engine/Fiber.h"

#include <algorithm>
#include <numeric>
#include <variant>
#include <vector>

namespace schedc::check {

namespace {

class Levels {
public:
  explicit Levels(const std::vector<uint32_t> &ofFunction) : of_(ofFunction) {}

  uint32_t block(const ir::Block &b) const {
    uint32_t deepest = 0;
    for (const ir::Stmt &s : b)
      deepest = std::max(deepest, statement(s));
    return deepest;
  }

private:
  static uint32_t plus(uint32_t a, uint32_t b) { return std::min(kNestingCap, a + b); }

  uint32_t statement(const ir::Stmt &s) const {
    return std::visit([&](const auto &x) { return of(x); }, s.node);
  }
  uint32_t of(const ir::LetStmt &x) const { return expr(x.value); }
  uint32_t of(const ir::StoreStmt &x) const { return std::max(operation(x.op), refs(x.targets)); }
  uint32_t of(const ir::FreeStmt &x) const { return refs(x.refs); }
  uint32_t of(const ir::IfStmt &x) const {
    return std::max(expr(x.cond), plus(1, std::max(block(x.then), block(x.otherwise))));
  }
  uint32_t of(const ir::ForStmt &x) const { return std::max(expr(x.domain), plus(1, block(x.body))); }
  uint32_t of(const ir::CallStmt &x) const { return std::max(exprs(x.args), plus(1, of_[x.callee])); }
  uint32_t of(const ir::MeshStmt &x) const { return exprs(x.sizes); }
  uint32_t of(const ir::RequireStmt &x) const { return expr(x.cond); }
  uint32_t of(const ir::OverlapStmt &x) const { return plus(1, std::max(block(x.first), block(x.second))); }
  uint32_t of(const ir::GroupStmt &x) const { return plus(1, block(x.body)); }
  uint32_t of(const ir::TableStmt &x) const { // a row runs its shape a level down
    uint32_t deepest = 0;
    for (const ir::TableStmt::Shape &shape : *x.shapes)
      deepest = std::max(deepest, block(shape.body));
    return plus(1, deepest);
  }

  uint32_t expr(const ir::Expr &e) const { return plus(1, exprs(e.operands)); }
  uint32_t exprs(const std::vector<ir::Expr> &es) const {
    uint32_t deepest = 0;
    for (const ir::Expr &e : es)
      deepest = std::max(deepest, expr(e));
    return deepest;
  }
  uint32_t refs(const std::vector<ir::StorageRef> &rs) const {
    uint32_t deepest = 0;
    for (const ir::StorageRef &r : rs)
      deepest = std::max(deepest, exprs(r.indices));
    return deepest;
  }
  uint32_t operation(const ir::Operation &op) const {
    uint32_t deepest = std::max({exprs(op.exprs), exprs(op.ref.indices), exprs(op.group.ranks)});
    for (const ir::Operation &v : op.values)
      deepest = std::max(deepest, operation(v));
    return plus(1, deepest);
  }

  const std::vector<uint32_t> &of_; // the levels of the functions computed so far
};

} // namespace

uint32_t nestingLevels(const ir::Program &program, const ir::Function &schedule) {
  std::vector<uint32_t> order(program.functions.size()), levels(program.functions.size(), 0);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return program.functions[a].callHeight < program.functions[b].callHeight;
  });
  Levels walk(levels);
  for (uint32_t f : order) // a callee's height is below its caller's: computed first
    levels[f] = walk.block(program.functions[f].body);
  return walk.block(schedule.body);
}

size_t stackBytesFor(const ir::Program &program, const ir::Function &schedule) {
  size_t levels = nestingLevels(program, schedule);
  return levels * kBytesPerLevel <= sim::kShallowStackBytes / 4 ? sim::kShallowStackBytes : sim::kFiberStackBytes;
}

} // namespace schedc::check
