// FunctionLowering's expressions (FunctionLowering.h): literals, names, storage reads, set
// literals, unary and binary operators, each typed (integer, boolean, set or training value);
// a mistake is an error value that silences the checks depending on it.
#include "sema/FunctionLowering.h"

namespace schedc::sema {

std::optional<ir::Expr> FunctionLowering::typedExpr(const ast::Expr &e, Type want, const std::string &what) {
  Typed v = expr(e);
  if (v.bad)
    return std::nullopt;
  if (v.type != want || v.isValue()) {
    diags_.error(e.range, what + " must be " + withArticle(want) + ", but this is " + withArticle(v.type));
    return std::nullopt;
  }
  return std::move(v.expr);
}

std::optional<ir::Expr> FunctionLowering::boolExpr(const ast::Expr &e) {
  Typed v = expr(e);
  if (v.bad)
    return std::nullopt;
  if (v.type != Type::Bool) {
    diags_.error(e.range, "a condition must be a boolean, but this is " + withArticle(v.type) +
                              (v.type == Type::Int ? " (compare it, e.g. `x != 0`)" : ""));
    return std::nullopt;
  }
  return std::move(v.expr);
}

Typed FunctionLowering::plain(ir::Expr e) {
  Typed t;
  t.type = e.type;
  t.expr = std::move(e);
  return t;
}

Typed FunctionLowering::value(ir::Operation op) {
  Typed t;
  t.type = op.results.size() == 1 ? op.results[0] : Type::Value;
  t.op = std::move(op);
  return t;
}

Typed FunctionLowering::expr(const ast::Expr &e) {
  switch (e.kind) {
  case ast::ExprKind::Int: return plain(leaf(ir::ExprOp::Int, Type::Int, e.dyn<ast::IntExpr>()->value, e.range));
  case ast::ExprKind::Bool: return plain(leaf(ir::ExprOp::Bool, Type::Bool, e.dyn<ast::BoolExpr>()->value, e.range));
  case ast::ExprKind::Name: return name(*e.dyn<ast::NameExpr>());
  case ast::ExprKind::Index: return read(*e.dyn<ast::IndexExpr>());
  case ast::ExprKind::Call: return call(*e.dyn<ast::CallExpr>());
  case ast::ExprKind::Set: return setLiteral(*e.dyn<ast::SetExpr>());
  case ast::ExprKind::Unary: return unary(*e.dyn<ast::UnaryExpr>());
  case ast::ExprKind::Binary: return binary(*e.dyn<ast::BinaryExpr>());
  }
  return Typed::error();
}

Typed FunctionLowering::name(const ast::NameExpr &e) {
  if (const Symbol *s = lookup(e.name)) {
    if (s->kind == Symbol::Axis)
      return plain(leaf(ir::ExprOp::AxisCoord, Type::Int, s->index, e.range));
    return plain(leaf(ir::ExprOp::Var, s->type, s->index, e.range));
  }
  for (const std::string &later : laterParams_)
    if (later == e.name) {
      diags_.error(e.range, "parameter `" + e.name + "` is used before it is declared");
      return Typed::error();
    }
  static const std::map<std::string, ir::ExprOp> builtins = {{"rank", ir::ExprOp::Rank},
                                                             {"ranks", ir::ExprOp::Ranks},
                                                             {"layers", ir::ExprOp::Layers},
                                                             {"batches", ir::ExprOp::Batches}};
  if (definingParams_ && e.name == "rank") {
    diags_.error(e.range, "a parameter default cannot use `rank`: parameters are the same on every rank");
    return Typed::error();
  }
  if (auto it = builtins.find(e.name); it != builtins.end())
    return plain(leaf(it->second, Type::Int, 0, e.range));
  if (std::optional<Tier> tier = tierNamed(e.name)) // a memory tier: its number
    return plain(leaf(ir::ExprOp::Int, Type::Int, static_cast<int64_t>(*tier), e.range));
  if (ctx_.arrayIds.count(e.name)) {
    diags_.error(e.range, "`" + e.name + "` is storage; read it with an index, e.g. `" + e.name + "[0]`");
    return Typed::error();
  }
  if (ctx_.functionIds.count(e.name) || findOperation(e.name)) {
    diags_.error(e.range, "`" + e.name + "` is " + (findOperation(e.name) ? "an operation" : "a procedure") +
                              "; call it with `" + e.name + "(...)`");
    return Typed::error();
  }
  std::vector<std::string_view> candidates = {"rank", "ranks", "layers", "batches"};
  for (const TierInfo &tier : kTierInfos)
    candidates.push_back(tier.name);
  for (const auto &scope : scopes_)
    for (const auto &[n, _] : scope)
      candidates.push_back(n);
  diags_.error(e.range, "unknown name `" + e.name + "`" + didYouMean(e.name, candidates));
  return Typed::error();
}

Typed FunctionLowering::read(const ast::IndexExpr &e) {
  if (const Symbol *s = lookup(e.name)) {
    diags_
        .error(e.nameRange, "`" + e.name + "` is " + (s->kind == Symbol::Axis ? "a mesh axis" : "a variable") +
                                ", not storage, and cannot be indexed")
        .note(s->defined, "`" + e.name + "` is defined here");
    return Typed::error();
  }
  std::optional<ir::StorageRef> r = storageRef(e.name, e.nameRange, e.indices, e.range);
  if (!r)
    return Typed::error();
  ir::Operation op;
  op.kind = ir::OpKind::Read;
  op.results = {ctx_.program.arrays[r->array].kind};
  op.ref = std::move(*r);
  op.range = e.range;
  return value(std::move(op));
}

Typed FunctionLowering::setLiteral(const ast::SetExpr &e) {
  ir::Expr set{ir::ExprOp::SetLit, Type::Set, 0, {}, e.range};
  bool ok = true;
  for (const auto &el : e.elems) {
    Typed v = expr(*el);
    if (v.bad) {
      ok = false;
    } else if (v.isValue() || (v.type != Type::Int && v.type != Type::Set)) {
      diags_.error(el->range, "a set element must be an integer or a set, but this is " + withArticle(v.type));
      ok = false;
    } else {
      set.operands.push_back(std::move(*v.expr));
    }
  }
  return ok ? plain(std::move(set)) : Typed::error();
}

Typed FunctionLowering::unary(const ast::UnaryExpr &e) {
  bool neg = e.op == ast::UnaryOp::Neg;
  Type want = neg ? Type::Int : Type::Bool;
  std::optional<ir::Expr> x = typedExpr(*e.operand, want, std::string("the operand of `") + ast::spelling(e.op) + "`");
  if (!x)
    return Typed::error();
  return plain(ir::Expr{neg ? ir::ExprOp::Neg : ir::ExprOp::Not, want, 0, {std::move(*x)}, e.range});
}

Typed FunctionLowering::binary(const ast::BinaryExpr &e) {
  Typed l = expr(*e.lhs);
  Typed r = expr(*e.rhs);
  if (l.bad || r.bad)
    return Typed::error();
  std::string opName = std::string("`") + ast::spelling(e.op) + "`";
  auto mismatch = [&](const std::string &need) {
    diags_.error(e.opRange, "operator " + opName + " needs " + need + ", but its operands are " + withArticle(l.type) +
                                " and " + withArticle(r.type));
    return Typed::error();
  };
  auto make = [&](ir::ExprOp op, Type t) {
    return plain(ir::Expr{op, t, 0, {std::move(*l.expr), std::move(*r.expr)}, e.range});
  };
  bool ints = !l.isValue() && !r.isValue() && l.type == Type::Int && r.type == Type::Int;
  switch (e.op) {
  case ast::BinaryOp::Add:
    if (l.isValue() && r.isValue()) {
      if (!gradOperand(l, *e.lhs) || !gradOperand(r, *e.rhs))
        return Typed::error();
      ir::Operation op;
      op.kind = ir::OpKind::AddGrad;
      op.values.push_back(std::move(*l.op));
      op.values.push_back(std::move(*r.op));
      op.results = resultTypes(OpKind::AddGrad);
      op.range = e.range;
      return value(std::move(op));
    }
    return ints ? make(ir::ExprOp::Add, Type::Int) : mismatch("two integers or two weight gradients");
  case ast::BinaryOp::Sub: return ints ? make(ir::ExprOp::Sub, Type::Int) : mismatch("integers");
  case ast::BinaryOp::Mul: return ints ? make(ir::ExprOp::Mul, Type::Int) : mismatch("integers");
  case ast::BinaryOp::Div: return ints ? make(ir::ExprOp::Div, Type::Int) : mismatch("integers");
  case ast::BinaryOp::Mod: return ints ? make(ir::ExprOp::Mod, Type::Int) : mismatch("integers");
  case ast::BinaryOp::Range: return ints ? make(ir::ExprOp::Range, Type::Set) : mismatch("integer bounds");
  case ast::BinaryOp::Lt: return ints ? make(ir::ExprOp::Lt, Type::Bool) : mismatch("integers");
  case ast::BinaryOp::Le: return ints ? make(ir::ExprOp::Le, Type::Bool) : mismatch("integers");
  case ast::BinaryOp::Gt: return ints ? make(ir::ExprOp::Gt, Type::Bool) : mismatch("integers");
  case ast::BinaryOp::Ge: return ints ? make(ir::ExprOp::Ge, Type::Bool) : mismatch("integers");
  case ast::BinaryOp::Eq:
  case ast::BinaryOp::Ne:
    if (l.isValue() || r.isValue() || l.type != r.type)
      return mismatch("two integers, two booleans or two sets");
    return make(e.op == ast::BinaryOp::Eq ? ir::ExprOp::Eq : ir::ExprOp::Ne, Type::Bool);
  case ast::BinaryOp::And:
  case ast::BinaryOp::Or:
    if (l.isValue() || r.isValue() || l.type != Type::Bool || r.type != Type::Bool)
      return mismatch("booleans");
    return make(e.op == ast::BinaryOp::And ? ir::ExprOp::And : ir::ExprOp::Or, Type::Bool);
  case ast::BinaryOp::In:
    if (l.isValue() || r.isValue() || l.type != Type::Int || r.type != Type::Set)
      return mismatch("an integer and a set");
    return make(ir::ExprOp::In, Type::Bool);
  }
  return Typed::error();
}

bool FunctionLowering::gradOperand(const Typed &v, const ast::Expr &e) {
  if (v.type == Type::WeightGrad || v.type == Type::Value)
    return true;
  diags_.error(e.range, "`+` on values adds weight gradients, but this is " + withArticle(v.type));
  return false;
}

} // namespace schedc::sema
