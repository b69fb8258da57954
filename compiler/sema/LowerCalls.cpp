// FunctionLowering's calls (FunctionLowering.h): built-in functions, rank_at, and operation
// calls bound against their signatures (Operations.def: positional, then named arguments,
// defaults), with their value operands and groups.
#include "sema/FunctionLowering.h"

namespace schedc::sema {

Typed FunctionLowering::call(const ast::CallExpr &c) {
  if (std::optional<OpKind> kind = findOperation(c.callee)) {
    if (opInfo(*kind).results.empty()) {
      diags_.error(c.range, "`" + c.callee + "` is a statement and yields no value");
      return Typed::error();
    }
    return operation(c, *kind);
  }
  if (isBuiltinFunction(c.callee))
    return builtinFunction(c);
  if (auto it = ctx_.functionIds.find(c.callee); it != ctx_.functionIds.end()) {
    const ast::Function &f = *ctx_.functionAsts[it->second];
    diags_.error(c.range, f.isSchedule ? "`" + c.callee + "` is a schedule and cannot be called; make it a `proc`"
                                       : "procedure `" + c.callee + "` yields no value; call it as a statement");
    return Typed::error();
  }
  std::vector<std::string_view> names(operationNames().begin(), operationNames().end());
  names.insert(names.end(), builtinFunctionNames().begin(), builtinFunctionNames().end());
  for (const auto &[n, _] : ctx_.functionIds)
    names.push_back(n);
  diags_.error(c.calleeRange, "unknown operation or procedure `" + c.callee + "`" + didYouMean(c.callee, names));
  return Typed::error();
}

Typed FunctionLowering::builtinFunction(const ast::CallExpr &c) {
  if (c.callee == "rank_at")
    return rankAt(c);
  if (c.callee == "held")
    return held(c);
  for (const ast::Arg &a : c.args)
    if (!a.name.empty()) {
      diags_.error(a.nameRange, "`" + c.callee + "` takes no named arguments");
      return Typed::error();
    }
  if (c.callee == "size") {
    if (c.args.size() != 1) {
      diags_.error(c.range, "`size` takes 1 argument, but " + std::to_string(c.args.size()) + " were given");
      return Typed::error();
    }
    const ast::Expr &arg = *c.args[0].value;
    if (auto *n = arg.dyn<ast::NameExpr>())
      if (const Symbol *s = lookup(n->name); s && s->kind == Symbol::Axis)
        return plain(leaf(ir::ExprOp::AxisSize, Type::Int, s->index, c.range));
    std::optional<ir::Expr> set = typedExpr(arg, Type::Set, "the argument of `size`");
    if (!set)
      return Typed::error();
    return plain(ir::Expr{ir::ExprOp::Size, Type::Int, 0, {std::move(*set)}, c.range});
  }
  if (c.args.empty()) {
    diags_.error(c.range, "`" + c.callee + "` needs at least one argument");
    return Typed::error();
  }
  ir::Expr e{c.callee == "min" ? ir::ExprOp::Min : ir::ExprOp::Max, Type::Int, 0, {}, c.range};
  for (const ast::Arg &a : c.args) {
    std::optional<ir::Expr> x = intExpr(*a.value, "an argument of `" + c.callee + "`");
    if (!x)
      return Typed::error();
    e.operands.push_back(std::move(*x));
  }
  return plain(std::move(e));
}

// held(act[l, mb]): whether this rank holds a value in the slot.
Typed FunctionLowering::held(const ast::CallExpr &c) {
  const ast::IndexExpr *slot =
      c.args.size() == 1 && c.args[0].name.empty() ? c.args[0].value->dyn<ast::IndexExpr>() : nullptr;
  if (!slot) {
    diags_.error(c.range, "`held` takes one storage slot, as in `held(act[l, mb])`");
    return Typed::error();
  }
  std::optional<ir::StorageRef> r = storageRef(slot->name, slot->nameRange, slot->indices, slot->range);
  if (!r)
    return Typed::error();
  ir::Expr e{ir::ExprOp::Held, Type::Bool, static_cast<int64_t>(r->array), std::move(r->indices), c.range};
  return plain(std::move(e));
}

Typed FunctionLowering::rankAt(const ast::CallExpr &c) {
  std::vector<std::optional<ir::Expr>> coords(out_.axes.size());
  bool ok = true;
  for (const ast::Arg &a : c.args) {
    if (a.name.empty()) {
      diags_.error(a.value->range, "`rank_at` takes named arguments, one per mesh axis: rank_at(stage = stage + 1)");
      return Typed::error();
    }
    const Symbol *s = lookup(a.name);
    if (!s || s->kind != Symbol::Axis) {
      std::string why =
          out_.axes.empty() ? "; declare one with `mesh (...)` first" : "; the axes are " + joinNames(out_.axes);
      diags_.error(a.nameRange, "`" + a.name + "` is not a mesh axis" + why);
      ok = false;
      continue;
    }
    if (coords[s->index]) {
      diags_.error(a.nameRange, "axis `" + a.name + "` is given twice in `rank_at`");
      ok = false;
      continue;
    }
    if (std::optional<ir::Expr> e = intExpr(*a.value, "the coordinate on `" + a.name + "`"))
      coords[s->index] = std::move(*e);
    else
      ok = false;
  }
  if (ok && c.args.empty()) {
    diags_.error(c.range, "`rank_at` needs at least one coordinate: rank_at(stage = stage + 1)");
    ok = false;
  }
  if (!ok)
    return Typed::error();
  ir::Expr e{ir::ExprOp::RankAt, Type::Int, 0, {}, c.range};
  for (size_t i = 0; i < coords.size(); ++i)
    e.operands.push_back(coords[i] ? std::move(*coords[i])
                                   : leaf(ir::ExprOp::AxisCoord, Type::Int, static_cast<int64_t>(i), c.range));
  return plain(std::move(e));
}

std::string FunctionLowering::joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", `" : "`") + names[i] + "`";
  return s;
}

bool FunctionLowering::bindArgs(const ast::CallExpr &c, const OpInfo &sig, std::vector<const ast::Expr *> &bound) {
  bound.assign(sig.params.size(), nullptr);
  std::vector<SourceRange> where(sig.params.size());
  bool ok = true, sawNamed = false;
  size_t positional = 0;
  for (const ast::Arg &a : c.args) {
    if (a.name.empty()) {
      if (sawNamed) {
        diags_.error(a.value->range, "a positional argument cannot follow a named one");
        return false;
      }
      if (positional >= sig.params.size()) {
        diags_.error(a.value->range, "`" + c.callee + "` takes at most " + std::to_string(sig.params.size()) +
                                         " argument" + (sig.params.size() == 1 ? "" : "s") + ", but " +
                                         std::to_string(c.args.size()) + " were given");
        return false;
      }
      where[positional] = a.value->range;
      bound[positional++] = a.value.get();
      continue;
    }
    sawNamed = true;
    size_t i = 0;
    while (i < sig.params.size() && a.name != sig.params[i].name)
      ++i;
    if (i == sig.params.size()) {
      std::vector<std::string_view> names;
      for (const ParamInfo &p : sig.params)
        names.push_back(p.name);
      diags_.error(a.nameRange,
                   "`" + c.callee + "` has no argument named `" + a.name + "`" + didYouMean(a.name, names));
      ok = false;
    } else if (bound[i]) {
      diags_.error(a.nameRange, "argument `" + a.name + "` of `" + c.callee + "` is given twice")
          .note(where[i], "it is first given here");
      ok = false;
    } else {
      where[i] = a.nameRange;
      bound[i] = a.value.get();
    }
  }
  for (size_t i = 0; ok && i < sig.params.size(); ++i)
    if (!bound[i] && !sig.params[i].optional) {
      diags_.error(c.range, "`" + c.callee + "` is missing its argument `" + sig.params[i].name + "`");
      ok = false;
    }
  return ok;
}

Typed FunctionLowering::operation(const ast::CallExpr &c, OpKind kind) {
  const OpInfo &sig = opInfo(kind);
  std::vector<const ast::Expr *> args;
  if (!bindArgs(c, sig, args))
    return Typed::error();
  ir::Operation op;
  op.kind = kind;
  op.results = resultTypes(kind);
  op.range = c.range;
  bool ok = true;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    std::string what = "argument `" + std::string(p.name) + "` of `" + c.callee + "`";
    switch (p.kind) {
    case ParamKind::Int:
      if (!args[i]) {
        op.exprs.push_back(leaf(ir::ExprOp::Int, Type::Int, p.defaultValue, c.range));
      } else if (std::optional<ir::Expr> e = intExpr(*args[i], what)) {
        op.exprs.push_back(std::move(*e));
      } else {
        ok = false;
      }
      break;
    case ParamKind::Set:
      if (std::optional<ir::Expr> e = typedExpr(*args[i], Type::Set, what))
        op.exprs.push_back(std::move(*e));
      else
        ok = false;
      break;
    case ParamKind::Value:
      if (std::optional<ir::Operation> v = valueOperand(*args[i], p, c.callee))
        op.values.push_back(std::move(*v));
      else
        ok = false;
      break;
    case ParamKind::Group:
      if (args[i]) {
        std::optional<ir::Group> g = group(*args[i]);
        ok &= g.has_value();
        if (g)
          op.group = std::move(*g);
      }
      break;
    }
  }
  for (size_t i = 0; ok && i < op.results.size(); ++i) // a result of its operand's type
    if (sig.results[i] == SigType::Operand)
      op.results[i] = op.values[0].results[0];
  return ok ? value(std::move(op)) : Typed::error();
}

std::optional<ir::Operation> FunctionLowering::valueOperand(const ast::Expr &e, const ParamInfo &p,
                                                            const std::string &callee) {
  Typed v = expr(e);
  if (v.bad)
    return std::nullopt;
  std::string what = "argument `" + std::string(p.name) + "` of `" + callee + "`";
  Type want = ir::typeOf(p.type); // Type::Value: any
  if (!v.isValue()) {
    diags_.error(e.range, what + " must be " + withArticle(want) + " from storage, but this is " + withArticle(v.type));
    return std::nullopt;
  }
  if (v.op->results.size() != 1) {
    diags_.error(e.range, what + " must be a single value, but `" + describeOp(*v.op) + "` yields " +
                              std::to_string(v.op->results.size()));
    return std::nullopt;
  }
  Type got = v.op->results[0];
  if (want != Type::Value && got != Type::Value && got != want) {
    auto d = diags_.error(e.range, what + " must be " + withArticle(want) + ", but this is " + withArticle(got));
    if (v.op->kind == ir::OpKind::Read) {
      const ir::Array &a = ctx_.program.arrays[v.op->ref.array];
      d.note(a.firstAssigned, "`" + a.name + "` holds " + withArticle(a.kind) + ": it is assigned here");
    }
    return std::nullopt;
  }
  return std::move(v.op);
}

std::optional<ir::Group> FunctionLowering::group(const ast::Expr &e) {
  ir::Group g;
  g.range = e.range;
  if (auto *n = e.dyn<ast::NameExpr>())
    if (const Symbol *s = lookup(n->name); s && s->kind == Symbol::Axis) {
      g.kind = ir::Group::Axis;
      g.axis = s->index;
      return g;
    }
  Typed v = expr(e);
  if (v.bad)
    return std::nullopt;
  if (v.isValue() || v.type != Type::Set) {
    std::string layerHint = v.type == Type::Int && !v.isValue()
                                ? " (a collective takes its layer from the value it is given, as in "
                                  "`allreduce(gw[l])`; a group is a set such as `{0, 1}` or a mesh axis)"
                                : "";
    diags_.error(e.range,
                 "a group must be a set of ranks or a mesh axis, but this is " + withArticle(v.type) + layerHint);
    return std::nullopt;
  }
  g.kind = ir::Group::Ranks;
  g.ranks.push_back(std::move(*v.expr));
  return g;
}

std::string FunctionLowering::describeOp(const ir::Operation &op) {
  return op.kind == ir::OpKind::Read ? "a storage read" : opName(op.kind);
}

} // namespace schedc::sema
