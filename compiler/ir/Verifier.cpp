// Verifier — checks the IR's invariants after sema builds it: every expression's type agrees
// with its operator, slots, arrays, axes and callees are in range, and every operation has
// the arguments and results its signature in Operations.def requires. A failure is a
// compiler bug (the driver turns it into an internal error), never something a user's
// schedule can cause.
#include "ir/IR.h"

namespace schedc::ir {

namespace {

class Checker {
public:
  explicit Checker(const Program &p) : p_(p) {}

  std::string run() {
    if (p_.entry && (*p_.entry >= p_.functions.size() || !p_.functions[*p_.entry].isSchedule))
      return "entry is not a schedule";
    for (const Function &f : p_.functions) {
      fn_ = &f;
      for (const Param &pr : f.params) {
        check(pr.slot < f.slotNames.size(), "parameter slot out of range");
        if (pr.defaultValue)
          expr(*pr.defaultValue, Type::Int);
      }
      check(f.isSchedule || f.axes.empty(), "procedure with mesh axes");
      block(f.body);
      if (!error_.empty())
        return "in `" + f.name + "`: " + error_;
    }
    return error_;
  }

private:
  bool check(bool ok, const char *what) {
    if (!ok && error_.empty())
      error_ = what;
    return ok;
  }

  void expr(const Expr &e, std::optional<Type> want = std::nullopt) {
    if (want)
      check(e.type == *want, "expression has the wrong type");
    auto all = [&](Type t) {
      for (const Expr &o : e.operands)
        expr(o, t);
    };
    switch (e.op) {
    case ExprOp::Int:
    case ExprOp::Rank:
    case ExprOp::Ranks:
    case ExprOp::Layers:
    case ExprOp::Batches: check(e.type == Type::Int && e.operands.empty(), "malformed integer leaf"); break;
    case ExprOp::Bool: check(e.type == Type::Bool && e.operands.empty(), "malformed boolean leaf"); break;
    case ExprOp::Var:
      check(e.value >= 0 && static_cast<size_t>(e.value) < fn_->slotNames.size(), "slot out of range");
      break;
    case ExprOp::AxisCoord:
    case ExprOp::AxisSize:
      check(e.value >= 0 && static_cast<size_t>(e.value) < fn_->axes.size(), "axis out of range");
      break;
    case ExprOp::Held:
      check(e.type == Type::Bool && e.value >= 0 && static_cast<size_t>(e.value) < p_.arrays.size(),
            "held of an unknown array");
      all(Type::Int);
      break;
    case ExprOp::RankAt:
      check(e.type == Type::Int && !e.operands.empty() && e.operands.size() == fn_->axes.size(),
            "rank_at needs one coordinate per mesh axis");
      all(Type::Int);
      break;
    case ExprOp::Neg:
    case ExprOp::Add:
    case ExprOp::Sub:
    case ExprOp::Mul:
    case ExprOp::Div:
    case ExprOp::Mod:
    case ExprOp::Min:
    case ExprOp::Max:
      check(e.type == Type::Int && !e.operands.empty(), "malformed arithmetic");
      all(Type::Int);
      break;
    case ExprOp::Lt:
    case ExprOp::Le:
    case ExprOp::Gt:
    case ExprOp::Ge:
      check(e.type == Type::Bool && e.operands.size() == 2, "malformed comparison");
      all(Type::Int);
      break;
    case ExprOp::Eq:
    case ExprOp::Ne:
      check(e.type == Type::Bool && e.operands.size() == 2 && e.operands[0].type == e.operands[1].type,
            "malformed equality");
      all(e.operands.empty() ? Type::Int : e.operands[0].type);
      break;
    case ExprOp::Not:
    case ExprOp::And:
    case ExprOp::Or:
      check(e.type == Type::Bool, "malformed logic");
      all(Type::Bool);
      break;
    case ExprOp::Range:
      check(e.type == Type::Set && e.operands.size() == 2, "malformed range");
      all(Type::Int);
      break;
    case ExprOp::SetLit:
      check(e.type == Type::Set, "malformed set");
      for (const Expr &o : e.operands) {
        check(o.type == Type::Int || o.type == Type::Set, "set element is neither int nor set");
        expr(o);
      }
      break;
    case ExprOp::In:
      check(e.type == Type::Bool && e.operands.size() == 2, "malformed membership");
      if (e.operands.size() == 2) {
        expr(e.operands[0], Type::Int);
        expr(e.operands[1], Type::Set);
      }
      break;
    case ExprOp::Size:
      check(e.type == Type::Int && e.operands.size() == 1, "malformed size");
      all(Type::Set);
      break;
    }
  }

  void ref(const StorageRef &r) {
    check(r.array < p_.arrays.size(), "array out of range");
    for (const Expr &i : r.indices)
      expr(i, Type::Int);
  }

  void op(const Operation &o) {
    if (o.kind == OpKind::Read) {
      ref(o.ref);
      check(o.results.size() == 1, "read without one result");
      return;
    }
    const OpInfo &info = opInfo(o.kind);
    size_t exprs = 0, values = 0;
    bool group = false;
    for (const ParamInfo &p : info.params) {
      exprs += p.kind == ParamKind::Int || p.kind == ParamKind::Set;
      values += p.kind == ParamKind::Value;
      group |= p.kind == ParamKind::Group;
    }
    check(o.exprs.size() == exprs, "operation has the wrong number of integer and set arguments");
    check(o.values.size() == values, "operation has the wrong number of value arguments");
    if (!error_.empty())
      return;
    for (size_t i = 0; i < info.params.size(); ++i) {
      const ParamInfo &p = info.params[i];
      if (p.kind == ParamKind::Int || p.kind == ParamKind::Set)
        expr(o.exprAt(i), typeOf(p.type));
      if (p.kind == ParamKind::Value) {
        op(o.valueAt(i));
        check(o.valueAt(i).results.size() == 1, "value argument without exactly one result");
      }
    }
    results(o, info);
    if (group)
      groupOf(o.group);
    else
      check(o.group.kind == Group::All, "a group on an operation without one");
  }

  // The results: the signature's, where one of kind Operand is its value argument's.
  void results(const Operation &o, const OpInfo &info) {
    check(o.results.size() == info.results.size(), "operation has the wrong number of results");
    for (size_t i = 0; i < o.results.size() && i < info.results.size(); ++i) {
      if (info.results[i] != SigType::Operand)
        check(o.results[i] == typeOf(info.results[i]), "operation has the wrong results");
      else
        check(o.values.size() == 1 && o.values[0].results.size() == 1 && o.results[i] == o.values[0].results[0],
              "a result that must have its operand's type does not");
    }
  }

  void groupOf(const Group &g) {
    if (g.kind == Group::Axis)
      check(g.axis < fn_->axes.size(), "group axis out of range");
    if (g.kind == Group::Ranks) {
      check(g.ranks.size() == 1, "rank group without its set");
      for (const Expr &e : g.ranks)
        expr(e, Type::Set);
    }
  }

  void block(const Block &b) {
    for (const Stmt &s : b) {
      if (auto *x = std::get_if<LetStmt>(&s.node)) {
        check(x->slot < fn_->slotNames.size(), "let slot out of range");
        expr(x->value);
      } else if (auto *x = std::get_if<StoreStmt>(&s.node)) {
        op(x->op);
        check(x->targets.empty() || x->targets.size() == x->op.results.size(), "store arity mismatch");
        for (const StorageRef &r : x->targets)
          ref(r);
      } else if (auto *x = std::get_if<FreeStmt>(&s.node)) {
        for (const StorageRef &r : x->refs)
          ref(r);
      } else if (auto *x = std::get_if<IfStmt>(&s.node)) {
        expr(x->cond, Type::Bool);
        block(x->then);
        block(x->otherwise);
      } else if (auto *x = std::get_if<ForStmt>(&s.node)) {
        check(x->slot < fn_->slotNames.size(), "loop slot out of range");
        expr(x->domain, Type::Set);
        block(x->body);
      } else if (auto *x = std::get_if<CallStmt>(&s.node)) {
        check(x->callee < p_.functions.size() && !p_.functions[x->callee].isSchedule, "bad callee");
        if (x->callee < p_.functions.size())
          check(x->args.size() == p_.functions[x->callee].params.size(), "call arity mismatch");
        for (const Expr &a : x->args)
          expr(a, Type::Int);
      } else if (auto *x = std::get_if<MeshStmt>(&s.node)) {
        check(fn_->isSchedule && x->sizes.size() == fn_->axes.size(), "mesh does not match the axes");
        for (const Expr &e : x->sizes)
          expr(e, Type::Int);
      } else if (auto *x = std::get_if<RequireStmt>(&s.node)) {
        expr(x->cond, Type::Bool);
      } else if (auto *x = std::get_if<OverlapStmt>(&s.node)) {
        block(x->first);
        block(x->second);
      } else if (auto *x = std::get_if<GroupStmt>(&s.node)) {
        block(x->body);
      } else if (auto *x = std::get_if<TableStmt>(&s.node)) {
        table(*x);
      }
    }
  }

  void table(const TableStmt &t) {
    if (!check(t.shapes != nullptr, "a table without shapes"))
      return;
    for (uint32_t slot : t.holes)
      check(slot < fn_->slotNames.size(), "a table's hole slot out of range");
    for (const TableStmt::Shape &shape : *t.shapes) {
      check(shape.holes <= t.holes.size(), "a shape reads more holes than its table has");
      block(shape.body);
    }
    for (const TableStmt::Row &row : t.rows)
      if (check(row.shape < t.shapes->size(), "a table row of no shape"))
        check(size_t{row.firstValue} + (*t.shapes)[row.shape].holes <= t.values.size(),
              "a table row's values out of range");
  }

  const Program &p_;
  const Function *fn_ = nullptr;
  std::string error_;
};

} // namespace

std::string verify(const Program &p) {
  return Checker(p).run();
}

} // namespace schedc::ir
