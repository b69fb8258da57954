// Walk — every statement of a block, the blocks nested in it included, in program order: an
// if's then-block before its else-block, a for's body, both sides of an overlap pair, a
// group's body, each shape of a table. For the passes that look at statements wherever
// they are (which functions a schedule calls, what each slot holds).
#pragma once

#include "ir/IR.h"

#include <variant>

namespace schedc::ir {

template <class F> void forEachStatement(const Block &block, const F &f) {
  for (const Stmt &s : block) {
    f(s);
    if (auto *x = std::get_if<IfStmt>(&s.node)) {
      forEachStatement(x->then, f);
      forEachStatement(x->otherwise, f);
    } else if (auto *x = std::get_if<ForStmt>(&s.node)) {
      forEachStatement(x->body, f);
    } else if (auto *x = std::get_if<OverlapStmt>(&s.node)) {
      forEachStatement(x->first, f);
      forEachStatement(x->second, f);
    } else if (auto *x = std::get_if<GroupStmt>(&s.node)) {
      forEachStatement(x->body, f);
    } else if (auto *x = std::get_if<TableStmt>(&s.node)) {
      for (const TableStmt::Shape &shape : *x->shapes)
        forEachStatement(shape.body, f);
    }
  }
}

} // namespace schedc::ir
