// Walk — every statement of a block, the blocks nested in it included, in program order: an
// if's then-block before its else-block, a for's body, both sides of an overlap pair, a
// group's body, each shape of a table. For the passes that look at statements wherever
// they are (which functions a schedule calls, what each slot holds). Each kind of
// statement is named: a new one fails to compile here until it says what it nests.
#pragma once

#include "ir/IR.h"

#include <variant>

namespace schedc::ir {

template <class F> void forEachStatement(const Block &block, const F &f) {
  struct Nested {
    const F &f;
    void operator()(const IfStmt &x) const {
      forEachStatement(x.then, f);
      forEachStatement(x.otherwise, f);
    }
    void operator()(const ForStmt &x) const { forEachStatement(x.body, f); }
    void operator()(const OverlapStmt &x) const {
      forEachStatement(x.first, f);
      forEachStatement(x.second, f);
    }
    void operator()(const GroupStmt &x) const { forEachStatement(x.body, f); }
    void operator()(const TableStmt &x) const {
      for (const TableStmt::Shape &shape : *x.shapes)
        forEachStatement(shape.body, f);
    }
    // Statements with no block inside.
    void operator()(const LetStmt &) const {}
    void operator()(const StoreStmt &) const {}
    void operator()(const FreeStmt &) const {}
    void operator()(const CallStmt &) const {}
    void operator()(const MeshStmt &) const {}
    void operator()(const RequireStmt &) const {}
  };
  for (const Stmt &s : block) {
    f(s);
    std::visit(Nested{f}, s.node);
  }
}

} // namespace schedc::ir
