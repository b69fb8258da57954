// FunctionLowering — checks one schedule or procedure and builds its IR. Names resolve
// through block scopes (parameters, `let`, loop variables, mesh axes) and then the
// built-ins (`rank`, `ranks`, `layers`, `batches`). Each expression is typed; a mistake
// yields an error value (`Typed::bad`) that silences every check depending on it, so one
// mistake is reported once. Operation calls are bound against the signatures in
// Operations.cpp; statements follow the language reference (docs/language.md).
#include "sema/Operations.h"
#include "sema/SemaContext.h"

#include <map>
#include <optional>

namespace schedc::sema {

namespace {

using ir::Type;

// The result of checking an expression: an integer/boolean/set expression, an operation
// on training values, or an error value.
struct Typed {
  Type type = Type::Int;
  std::optional<ir::Expr> expr;
  std::optional<ir::Operation> op;
  bool bad = false;

  static Typed error() {
    Typed t;
    t.bad = true;
    return t;
  }
  bool isValue() const { return !bad && op.has_value(); }
};

class FunctionLowering {
public:
  FunctionLowering(const ast::Function &fn, uint32_t id, SemaContext &ctx)
      : ast_(fn), id_(id), ctx_(ctx), out_(ctx.program.functions[id]), diags_(ctx.diags) {}

  void run() {
    out_.name = ast_.name;
    out_.isSchedule = ast_.isSchedule;
    out_.range = ast_.range;
    scopes_.emplace_back();
    params();
    if (ast_.isSchedule)
      attributes();
    out_.body = block(*ast_.body, /*topLevel=*/true);
  }

private:
  // ---- Scopes ------------------------------------------------------------------------------

  struct Symbol {
    enum Kind { Slot, Axis } kind;
    uint32_t index;
    Type type;
    SourceRange defined;
  };

  const Symbol *lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return &f->second;
    }
    return nullptr;
  }

  // Defines a name in the innermost scope; reports a clash with any visible name.
  bool define(const std::string &name, SourceRange at, Symbol sym) {
    if (const Symbol *prev = lookup(name)) {
      diags_.error(at, "`" + name + "` is already defined").note(prev->defined, "`" + name + "` is defined here");
      return false;
    }
    if (isBuiltinName(name) && !(ast_.isSchedule && sym.kind == Symbol::Slot && definingParams_)) {
      diags_.error(at, "`" + name + "` is a built-in name and cannot be redefined");
      return false;
    }
    scopes_.back()[name] = sym;
    return true;
  }

  uint32_t newSlot(const std::string &name) {
    out_.slotNames.push_back(name);
    return static_cast<uint32_t>(out_.slotNames.size() - 1);
  }

  // ---- Header ------------------------------------------------------------------------------

  void params() {
    definingParams_ = true;
    bool hasLayers = false, hasBatches = false;
    for (size_t i = 0; i < ast_.params.size(); ++i) {
      const ast::Param &p = ast_.params[i];
      ir::Param param{p.name, 0, std::nullopt, p.range};
      if (p.defaultValue) {
        if (!ast_.isSchedule) {
          diags_.error(p.defaultValue->range, "procedure parameters cannot have defaults");
        } else {
          laterParams_.clear();
          for (size_t j = i; j < ast_.params.size(); ++j)
            laterParams_.push_back(ast_.params[j].name);
          param.defaultValue = intExpr(*p.defaultValue, "a parameter default");
          laterParams_.clear();
        }
      }
      param.slot = newSlot(p.name);
      hasLayers |= p.name == "layers";
      hasBatches |= p.name == "batches";
      if (define(p.name, p.range, Symbol{Symbol::Slot, param.slot, Type::Int, p.range}))
        out_.params.push_back(std::move(param));
    }
    definingParams_ = false;
    if (ast_.isSchedule && (!hasLayers || !hasBatches))
      diags_.error(ast_.nameRange, "schedule `" + ast_.name + "` must declare the model parameters " +
                                       (hasLayers    ? "`batches`"
                                        : hasBatches ? "`layers`"
                                                     : "`layers` and `batches`"));
  }

  void attributes() {
    for (const ast::Attribute &a : ast_.attributes) {
      if (a.name != "target") {
        diags_.error(a.nameRange, "unknown attribute `@" + a.name + "`" + didYouMean(a.name, {"target"}));
        continue;
      }
      out_.targets.range = a.range;
      for (const ast::Arg &arg : a.args) {
        auto *lit = arg.value->dyn<ast::IntExpr>();
        std::optional<int64_t> *slot = arg.name == "steps"    ? &out_.targets.steps
                                       : arg.name == "memory" ? &out_.targets.memory
                                                              : nullptr;
        if (!slot) {
          diags_.error(arg.name.empty() ? arg.value->range : arg.nameRange,
                       arg.name.empty() ? "`@target` takes named arguments: `steps = N`, `memory = N`"
                                        : "`@target` has no argument `" + arg.name + "`" +
                                              didYouMean(arg.name, {"steps", "memory"}));
        } else if (!lit) {
          diags_.error(arg.value->range, "`@target` " + arg.name + " must be an integer literal");
        } else if (slot->has_value()) {
          diags_.error(arg.nameRange, "`@target` argument `" + arg.name + "` is given twice");
        } else {
          *slot = lit->value;
        }
      }
    }
  }

  // ---- Statements --------------------------------------------------------------------------

  ir::Block block(const ast::BlockStmt &b, bool topLevel = false) {
    if (!topLevel)
      scopes_.emplace_back();
    ir::Block out;
    for (const auto &s : b.stmts) {
      if (diags_.limitReached())
        break;
      statement(*s, out, topLevel);
    }
    if (!topLevel)
      scopes_.pop_back();
    return out;
  }

  void emit(ir::Block &out, SourceRange r, auto node) { out.push_back(ir::Stmt{std::move(node), r}); }

  void statement(const ast::Stmt &s, ir::Block &out, bool topLevel) {
    switch (s.kind) {
    case ast::StmtKind::Let: return letStmt(*s.dyn<ast::LetStmt>(), out);
    case ast::StmtKind::Assign: return assignStmt(*s.dyn<ast::AssignStmt>(), out);
    case ast::StmtKind::Free: return freeStmt(*s.dyn<ast::FreeStmt>(), out);
    case ast::StmtKind::If: return ifStmt(*s.dyn<ast::IfStmt>(), out);
    case ast::StmtKind::For: return forStmt(*s.dyn<ast::ForStmt>(), out);
    case ast::StmtKind::Mesh: return meshStmt(*s.dyn<ast::MeshStmt>(), out, topLevel);
    case ast::StmtKind::Expr: return exprStmt(*s.dyn<ast::ExprStmt>(), out);
    case ast::StmtKind::Block: {
      ir::Block inner = block(*s.dyn<ast::BlockStmt>());
      // A nested block only scopes names; its statements run in place.
      for (ir::Stmt &st : inner)
        out.push_back(std::move(st));
      return;
    }
    }
  }

  void letStmt(const ast::LetStmt &s, ir::Block &out) {
    Typed v = expr(*s.value);
    if (v.isValue()) {
      diags_.error(s.value->range, "`let` binds integers, booleans and sets, not " + withArticle(v.type) +
                                       "; store values in indexed storage, e.g. `" + s.name + "[0] = ...`");
      v = Typed::error();
    }
    uint32_t slot = newSlot(s.name);
    if (!define(s.name, s.nameRange, Symbol{Symbol::Slot, slot, v.bad ? Type::Int : v.type, s.nameRange}) || v.bad)
      return;
    emit(out, s.range, ir::LetStmt{slot, std::move(*v.expr)});
  }

  void assignStmt(const ast::AssignStmt &s, ir::Block &out) {
    // The value first: if it is wrong, nothing more is said about the statement.
    Typed v = expr(*s.value);
    if (v.bad)
      return;
    std::vector<ir::StorageRef> targets;
    bool ok = true;
    for (const ast::Target &t : s.targets) {
      std::optional<ir::StorageRef> r = target(t, /*isFree=*/false);
      ok &= r.has_value();
      if (r)
        targets.push_back(std::move(*r));
    }
    if (!ok)
      return;
    if (!v.isValue()) {
      diags_.error(s.value->range, "cannot store " + withArticle(v.type) +
                                       " in storage; use `let` to name integers, booleans and sets");
      return;
    }
    size_t n = v.op->results.size();
    if (targets.size() != n) {
      diags_.error(s.range, "`" + describeOp(*v.op) + "` yields " + std::to_string(n) +
                                (n == 1 ? " value" : " values") + ", but " + std::to_string(targets.size()) +
                                (targets.size() == 1 ? " target is" : " targets are") + " assigned");
      return;
    }
    emit(out, s.range, ir::StoreStmt{std::move(targets), std::move(*v.op)});
  }

  void freeStmt(const ast::FreeStmt &s, ir::Block &out) {
    std::vector<ir::StorageRef> refs;
    for (const ast::Target &t : s.targets)
      if (std::optional<ir::StorageRef> r = target(t, /*isFree=*/true))
        refs.push_back(std::move(*r));
    if (refs.size() == s.targets.size())
      emit(out, s.range, ir::FreeStmt{std::move(refs)});
  }

  void ifStmt(const ast::IfStmt &s, ir::Block &out) {
    std::optional<ir::Expr> cond = boolExpr(*s.cond);
    ir::Block then = block(*s.then);
    ir::Block otherwise;
    if (s.otherwise) {
      if (auto *b = s.otherwise->dyn<ast::BlockStmt>()) {
        otherwise = block(*b);
      } else {
        scopes_.emplace_back();
        ifStmt(*s.otherwise->dyn<ast::IfStmt>(), otherwise);
        scopes_.pop_back();
      }
    }
    if (cond)
      emit(out, s.range, ir::IfStmt{std::move(*cond), std::move(then), std::move(otherwise)});
  }

  void forStmt(const ast::ForStmt &s, ir::Block &out) {
    Typed d = expr(*s.domain);
    std::optional<ir::Expr> domain;
    if (!d.bad) {
      if (d.type == Type::Set)
        domain = std::move(d.expr);
      else
        diags_.error(s.domain->range, "`for` iterates over a set or a range like `0..n`, not " + withArticle(d.type));
    }
    scopes_.emplace_back();
    uint32_t slot = newSlot(s.var);
    define(s.var, s.varRange, Symbol{Symbol::Slot, slot, Type::Int, s.varRange});
    ir::Block body = block(*s.body);
    scopes_.pop_back();
    if (domain)
      emit(out, s.range, ir::ForStmt{slot, std::move(*domain), s.reversed, std::move(body)});
  }

  void meshStmt(const ast::MeshStmt &s, ir::Block &out, bool topLevel) {
    if (!ast_.isSchedule) {
      diags_.error(s.range, "`mesh` may only be declared in a schedule, not in a procedure");
      return;
    }
    if (!topLevel) {
      diags_.error(s.range, "`mesh` must be declared at the top level of the schedule body");
      return;
    }
    if (meshAt_.valid()) {
      diags_.error(s.range, "the schedule already declares a mesh").note(meshAt_, "the mesh is declared here");
      return;
    }
    meshAt_ = s.range;
    ir::MeshStmt mesh;
    bool ok = true;
    for (const ast::MeshAxis &a : s.axes) {
      std::optional<ir::Expr> size = intExpr(*a.size, "a mesh axis size");
      ok &= size.has_value();
      if (size)
        mesh.sizes.push_back(std::move(*size));
      auto axis = static_cast<uint32_t>(out_.axes.size());
      out_.axes.push_back(a.name);
      ok &= define(a.name, a.nameRange, Symbol{Symbol::Axis, axis, Type::Int, a.nameRange});
    }
    if (ok)
      emit(out, s.range, std::move(mesh));
  }

  void exprStmt(const ast::ExprStmt &s, ir::Block &out) {
    auto *call = s.expr->dyn<ast::CallExpr>();
    if (!call) {
      Typed v = expr(*s.expr);
      if (!v.bad)
        diags_.error(s.expr->range, "expression statement has no effect");
      return;
    }
    if (std::optional<OpKind> kind = findOperation(call->callee)) {
      Typed v = operation(*call, *kind);
      if (v.bad)
        return;
      if (!v.op->results.empty())
        diags_.warning(call->range, "the result of `" + call->callee + "` is not stored and is lost");
      emit(out, s.range, ir::StoreStmt{{}, std::move(*v.op)});
      return;
    }
    auto it = ctx_.functionIds.find(call->callee);
    if (it != ctx_.functionIds.end() && !ctx_.program.functions[it->second].isSchedule &&
        !ctx_.functionAsts[it->second]->isSchedule)
      return procCall(*call, it->second, out);
    Typed v = expr(*s.expr); // reports what the name is
    if (!v.bad)
      diags_.error(s.expr->range, "the value of `" + call->callee + "(...)` is unused");
  }

  void procCall(const ast::CallExpr &call, uint32_t callee, ir::Block &out) {
    const ast::Function &f = *ctx_.functionAsts[callee];
    ir::CallStmt c{callee, {}};
    bool ok = true;
    for (const ast::Arg &a : call.args) {
      if (!a.name.empty()) {
        diags_.error(a.nameRange, "procedure arguments are positional; remove `" + a.name + " =`");
        ok = false;
        continue;
      }
      std::optional<ir::Expr> e = intExpr(*a.value, "a procedure argument");
      ok &= e.has_value();
      if (e)
        c.args.push_back(std::move(*e));
    }
    if (call.args.size() != f.params.size()) {
      diags_
          .error(call.range, "procedure `" + f.name + "` takes " + std::to_string(f.params.size()) + " argument" +
                                 (f.params.size() == 1 ? "" : "s") + ", but " + std::to_string(call.args.size()) +
                                 (call.args.size() == 1 ? " was" : " were") + " given")
          .note(f.nameRange, "`" + f.name + "` is declared here");
      return;
    }
    ctx_.calls.push_back({id_, callee, call.range});
    if (ok)
      emit(out, call.range, std::move(c));
  }

  // A storage target (of an assignment or `free`).
  std::optional<ir::StorageRef> target(const ast::Target &t, bool isFree) {
    if (const Symbol *sym = lookup(t.name)) {
      diags_
          .error(t.nameRange, "`" + t.name + "` is " + (sym->kind == Symbol::Axis ? "a mesh axis" : "a variable") +
                                  ", not storage; " + (isFree ? "only storage can be freed" : "it cannot be assigned"))
          .note(sym->defined, "`" + t.name + "` is defined here");
      return std::nullopt;
    }
    if (!t.indexed) {
      diags_.error(t.range, "storage `" + t.name + "` needs an index, e.g. `" + t.name + "[0]`" +
                                (isFree ? "" : "; use `let` to name integers, booleans and sets"));
      return std::nullopt;
    }
    return storageRef(t.name, t.nameRange, t.indices, t.range);
  }

  std::optional<ir::StorageRef> storageRef(const std::string &name, SourceRange nameRange,
                                           const std::vector<ast::ExprPtr> &indices, SourceRange range) {
    auto it = ctx_.arrayIds.find(name);
    if (it == ctx_.arrayIds.end() || ctx_.unassignedArrays.count(it->second)) {
      std::vector<std::string_view> known;
      for (const auto &[n, id] : ctx_.arrayIds)
        if (!ctx_.unassignedArrays.count(id))
          known.push_back(n);
      std::string message = "storage `" + name + "` is never assigned" + didYouMean(name, known);
      if (ast_.isSchedule) {
        diags_.error(nameRange, message);
        return std::nullopt;
      }
      ctx_.deferred.push_back({id_, nameRange, message});
      if (it == ctx_.arrayIds.end()) {
        it = ctx_.arrayIds.emplace(name, static_cast<uint32_t>(ctx_.program.arrays.size())).first;
        ctx_.program.arrays.push_back(ir::Array{name, Type::Value, nameRange});
        ctx_.unassignedArrays.insert(it->second);
      }
    }
    ir::StorageRef r{it->second, {}, range};
    bool ok = true;
    for (const auto &i : indices) {
      std::optional<ir::Expr> e = intExpr(*i, "a storage index");
      ok &= e.has_value();
      if (e)
        r.indices.push_back(std::move(*e));
    }
    return ok ? std::optional(std::move(r)) : std::nullopt;
  }

  // ---- Expressions -------------------------------------------------------------------------

  static ir::Expr leaf(ir::ExprOp op, Type t, int64_t v, SourceRange r) { return ir::Expr{op, t, v, {}, r}; }

  std::optional<ir::Expr> typedExpr(const ast::Expr &e, Type want, const std::string &what) {
    Typed v = expr(e);
    if (v.bad)
      return std::nullopt;
    if (v.type != want || v.isValue()) {
      diags_.error(e.range, what + " must be " + withArticle(want) + ", but this is " + withArticle(v.type));
      return std::nullopt;
    }
    return std::move(v.expr);
  }
  std::optional<ir::Expr> intExpr(const ast::Expr &e, const std::string &what) { return typedExpr(e, Type::Int, what); }
  std::optional<ir::Expr> boolExpr(const ast::Expr &e) {
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

  static Typed plain(ir::Expr e) {
    Typed t;
    t.type = e.type;
    t.expr = std::move(e);
    return t;
  }
  static Typed value(ir::Operation op) {
    Typed t;
    t.type = op.results.size() == 1 ? op.results[0] : Type::Value;
    t.op = std::move(op);
    return t;
  }

  Typed expr(const ast::Expr &e) {
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

  Typed name(const ast::NameExpr &e) {
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
    for (const auto &scope : scopes_)
      for (const auto &[n, _] : scope)
        candidates.push_back(n);
    diags_.error(e.range, "unknown name `" + e.name + "`" + didYouMean(e.name, candidates));
    return Typed::error();
  }

  Typed read(const ast::IndexExpr &e) {
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

  Typed setLiteral(const ast::SetExpr &e) {
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

  Typed unary(const ast::UnaryExpr &e) {
    bool neg = e.op == ast::UnaryOp::Neg;
    Type want = neg ? Type::Int : Type::Bool;
    std::optional<ir::Expr> x =
        typedExpr(*e.operand, want, std::string("the operand of `") + ast::spelling(e.op) + "`");
    if (!x)
      return Typed::error();
    return plain(ir::Expr{neg ? ir::ExprOp::Neg : ir::ExprOp::Not, want, 0, {std::move(*x)}, e.range});
  }

  Typed binary(const ast::BinaryExpr &e) {
    Typed l = expr(*e.lhs);
    Typed r = expr(*e.rhs);
    if (l.bad || r.bad)
      return Typed::error();
    std::string opName = std::string("`") + ast::spelling(e.op) + "`";
    auto mismatch = [&](const std::string &need) {
      diags_.error(e.opRange, "operator " + opName + " needs " + need + ", but its operands are " +
                                  withArticle(l.type) + " and " + withArticle(r.type));
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

  bool gradOperand(const Typed &v, const ast::Expr &e) {
    if (v.type == Type::WeightGrad || v.type == Type::Value)
      return true;
    diags_.error(e.range, "`+` on values adds weight gradients, but this is " + withArticle(v.type));
    return false;
  }

  // ---- Calls -------------------------------------------------------------------------------

  Typed call(const ast::CallExpr &c) {
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

  Typed builtinFunction(const ast::CallExpr &c) {
    if (c.callee == "rank_at")
      return rankAt(c);
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

  // rank_at(axis = coordinate, ...): the rank at those coordinates of the mesh, this rank's
  // own on the axes not named (a neighbour along an axis: rank_at(stage = stage + 1)).
  Typed rankAt(const ast::CallExpr &c) {
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

  static std::string joinNames(const std::vector<std::string> &names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i)
      s += (i ? ", `" : "`") + names[i] + "`";
    return s;
  }

  // Matches call arguments to the signature's parameters (positional, then named).
  // `bound[i]` is the argument for parameter i, or null if it was omitted (and optional).
  bool bindArgs(const ast::CallExpr &c, const OpInfo &sig, std::vector<const ast::Expr *> &bound) {
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

  Typed operation(const ast::CallExpr &c, OpKind kind) {
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
    if (ok && op.kind == OpKind::Shard && !shardable(op))
      ok = false;
    for (size_t i = 0; ok && i < op.results.size(); ++i) // a result of its operand's type
      if (sig.results[i] == SigType::Operand)
        op.results[i] = op.values[0].results[0];
    return ok ? value(std::move(op)) : Typed::error();
  }

  // `shard` takes a value that is sharded: a weight, an optimizer state or a weight gradient
  // (a value from `recv` is checked when it runs).
  bool shardable(const ir::Operation &op) {
    const ir::Operation &v = op.value(param::Shard::value);
    Type t = v.results[0];
    if (t != Type::Weight && t != Type::OptState && t != Type::WeightGrad && t != Type::Value) {
      diags_.error(v.range,
                   "`shard` takes a weight, an optimizer state or a weight gradient, but this is " + withArticle(t));
      return false;
    }
    return true;
  }

  std::optional<ir::Operation> valueOperand(const ast::Expr &e, const ParamInfo &p, const std::string &callee) {
    Typed v = expr(e);
    if (v.bad)
      return std::nullopt;
    std::string what = "argument `" + std::string(p.name) + "` of `" + callee + "`";
    Type want = ir::typeOf(p.type); // Type::Value: any
    if (!v.isValue()) {
      diags_.error(e.range,
                   what + " must be " + withArticle(want) + " from storage, but this is " + withArticle(v.type));
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

  std::optional<ir::Group> group(const ast::Expr &e) {
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
      diags_.error(e.range, "a group must be a set of ranks or a mesh axis, but this is " + withArticle(v.type));
      return std::nullopt;
    }
    g.kind = ir::Group::Ranks;
    g.ranks.push_back(std::move(*v.expr));
    return g;
  }

  static std::string describeOp(const ir::Operation &op) {
    return op.kind == ir::OpKind::Read ? "a storage read" : opName(op.kind);
  }

  const ast::Function &ast_;
  uint32_t id_;
  SemaContext &ctx_;
  ir::Function &out_;
  DiagnosticEngine &diags_;
  std::vector<std::map<std::string, Symbol>> scopes_;
  std::vector<std::string> laterParams_; // while checking a default: this and later parameters
  bool definingParams_ = false;
  SourceRange meshAt_;
};

} // namespace

void lowerFunction(const ast::Function &fn, uint32_t id, SemaContext &ctx) {
  FunctionLowering(fn, id, ctx).run();
}

} // namespace schedc::sema
