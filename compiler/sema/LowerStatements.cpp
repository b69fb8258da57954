// FunctionLowering's statements (FunctionLowering.h): blocks and their scopes, `let`,
// assignment to storage, `free`, `if`, `for`, `mesh`, `require`, expression statements and procedure
// calls, and the storage targets they name; each as docs/language.md states it.
#include "sema/FunctionLowering.h"

namespace schedc::sema {

ir::Block FunctionLowering::block(const ast::BlockStmt &b, bool topLevel) {
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

void FunctionLowering::statement(const ast::Stmt &s, ir::Block &out, bool topLevel) {
  switch (s.kind) {
  case ast::StmtKind::Let: return letStmt(*s.dyn<ast::LetStmt>(), out);
  case ast::StmtKind::Assign: return assignStmt(*s.dyn<ast::AssignStmt>(), out);
  case ast::StmtKind::Free: return freeStmt(*s.dyn<ast::FreeStmt>(), out);
  case ast::StmtKind::If: return ifStmt(*s.dyn<ast::IfStmt>(), out);
  case ast::StmtKind::For: return forStmt(*s.dyn<ast::ForStmt>(), out);
  case ast::StmtKind::Mesh: return meshStmt(*s.dyn<ast::MeshStmt>(), out, topLevel);
  case ast::StmtKind::Require: return requireStmt(*s.dyn<ast::RequireStmt>(), out);
  case ast::StmtKind::Overlap: return overlapStmt(*s.dyn<ast::OverlapStmt>(), out);
  case ast::StmtKind::Group: return groupStmt(*s.dyn<ast::GroupStmt>(), out);
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

void FunctionLowering::letStmt(const ast::LetStmt &s, ir::Block &out) {
  Typed v = expr(*s.value);
  if (v.isValue()) {
    diags_.error(s.value->range, "`let` binds integers, booleans and sets, not " + withArticle(v.type) +
                                     "; store values in indexed storage, e.g. `" + s.name + "[0] = ...`");
    v = Typed::error();
  }
  uint32_t slot = newSlot(s.name, !v.bad && sameOnEveryRank(*v.expr));
  if (!define(s.name, s.nameRange, Symbol{Symbol::Slot, slot, v.bad ? Type::Int : v.type, s.nameRange}) || v.bad)
    return;
  emit(out, s.range, ir::LetStmt{slot, std::move(*v.expr)});
}

void FunctionLowering::assignStmt(const ast::AssignStmt &s, ir::Block &out) {
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
    diags_.error(s.value->range,
                 "cannot store " + withArticle(v.type) + " in storage; use `let` to name integers, booleans and sets");
    return;
  }
  size_t n = v.op->results.size();
  if (targets.size() != n) {
    diags_.error(s.range, "`" + describeOp(*v.op) + "` yields " + std::to_string(n) + (n == 1 ? " value" : " values") +
                              ", but " + std::to_string(targets.size()) +
                              (targets.size() == 1 ? " target is" : " targets are") + " assigned");
    return;
  }
  emit(out, s.range, ir::StoreStmt{std::move(targets), std::move(*v.op)});
}

void FunctionLowering::freeStmt(const ast::FreeStmt &s, ir::Block &out) {
  std::vector<ir::StorageRef> refs;
  for (const ast::Target &t : s.targets)
    if (std::optional<ir::StorageRef> r = target(t, /*isFree=*/true))
      refs.push_back(std::move(*r));
  if (refs.size() == s.targets.size())
    emit(out, s.range, ir::FreeStmt{std::move(refs)});
}

void FunctionLowering::ifStmt(const ast::IfStmt &s, ir::Block &out) {
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

void FunctionLowering::forStmt(const ast::ForStmt &s, ir::Block &out) {
  Typed d = expr(*s.domain);
  std::optional<ir::Expr> domain;
  if (!d.bad) {
    if (d.type == Type::Set)
      domain = std::move(d.expr);
    else
      diags_.error(s.domain->range, "`for` iterates over a set or a range like `0..n`, not " + withArticle(d.type));
  }
  scopes_.emplace_back();
  uint32_t slot = newSlot(s.var, domain && sameOnEveryRank(*domain));
  define(s.var, s.varRange, Symbol{Symbol::Slot, slot, Type::Int, s.varRange});
  ir::Block body = block(*s.body);
  scopes_.pop_back();
  if (domain)
    emit(out, s.range, ir::ForStmt{slot, std::move(*domain), s.reversed, std::move(body)});
}

void FunctionLowering::meshStmt(const ast::MeshStmt &s, ir::Block &out, bool topLevel) {
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

void FunctionLowering::requireStmt(const ast::RequireStmt &s, ir::Block &out) {
  if (std::optional<ir::Expr> cond = boolExpr(*s.cond)) {
    bool everyRank = sameOnEveryRank(*cond);
    emit(out, s.range, ir::RequireStmt{std::move(*cond), s.message, everyRank});
  }
}

void FunctionLowering::overlapStmt(const ast::OverlapStmt &s, ir::Block &out) {
  if (inOverlap_) { // one pair at a time: a side is one stream of work
    diags_.error(s.range, "an `overlap` cannot hold another: a pair has two sides, each run in order");
    return;
  }
  inOverlap_ = true;
  ir::Block first = block(*s.first), second = block(*s.second);
  inOverlap_ = false;
  emit(out, s.range, ir::OverlapStmt{std::move(first), std::move(second)});
}

namespace {

// What a `group` holds (FunctionLowering::groupStmt), looked into loops and branches: either
// point-to-point operations (sends, posted receives, the frees of what they sent) or
// collectives, each on a stored value (the call runs when the group ends, so nothing inside
// computes its operand, and nothing it reads is freed before), with `let`s around them. One
// overload a statement kind: a new kind does not compile until it says whether it may.
class GroupContents {
public:
  explicit GroupContents(DiagnosticEngine &diags) : diags_(diags) {}

  void block(const ir::Block &b) {
    for (const ir::Stmt &s : b)
      std::visit([&](const auto &node) { stmt(node, s); }, s.node);
  }
  // After the whole body: a free beside collectives.
  void finish() {
    if (firstCollective_ && firstFree_)
      diags_
          .error(firstFree_->range, "a `group` of collectives cannot free: its call reads its operands until it ends, "
                                    "after the group; free them after it")
          .note(firstCollective_->range, "the group's first collective is here");
  }

private:
  void stmt(const ir::ForStmt &x, const ir::Stmt &) { block(x.body); }
  void stmt(const ir::IfStmt &x, const ir::Stmt &) {
    block(x.then);
    block(x.otherwise);
  }
  void stmt(const ir::LetStmt &, const ir::Stmt &) {}
  void stmt(const ir::FreeStmt &, const ir::Stmt &s) {
    if (!firstFree_)
      firstFree_ = &s;
  }
  void stmt(const ir::GroupStmt &, const ir::Stmt &s) {
    diags_.error(s.range, "groups do not nest: write one `group` with all the operations issued together");
  }
  void stmt(const ir::CallStmt &, const ir::Stmt &s) { notHeld(s); }
  void stmt(const ir::MeshStmt &, const ir::Stmt &s) { notHeld(s); }
  void stmt(const ir::RequireStmt &, const ir::Stmt &s) { notHeld(s); }
  void stmt(const ir::OverlapStmt &, const ir::Stmt &s) { notHeld(s); }
  void stmt(const ir::TableStmt &, const ir::Stmt &s) { notHeld(s); }
  void stmt(const ir::StoreStmt &x, const ir::Stmt &s) {
    bool p2p = x.targets.empty() && (x.op.kind == ir::OpKind::Send || x.op.kind == ir::OpKind::PostRecv);
    bool collective = !x.targets.empty() && collectiveOf(x.op.kind);
    if (!p2p && !collective)
      return notHeld(s);
    const ir::Stmt *other = p2p ? firstCollective_ : firstP2p_;
    if (other)
      diags_
          .error(s.range, "a `group` holds either point-to-point operations or collectives, not both: put the " +
                              std::string(p2p ? "send or posted receive" : "collective") + " in a group of its own")
          .note(other->range,
                std::string("the group's first ") + (p2p ? "collective" : "send or posted receive") + " is here");
    const ir::Stmt *&first = p2p ? firstP2p_ : firstCollective_;
    if (!first)
      first = &s;
    if (collective)
      for (const ir::Operation &operand : x.op.values)
        if (operand.kind != ir::OpKind::Read)
          diags_.error(operand.range, "a collective in a `group` takes a stored value: its call runs when the group "
                                      "ends, so compute this operand before the group and store it");
  }
  void notHeld(const ir::Stmt &s) {
    diags_.error(s.range, "a `group` holds sends and posted receives (`post_recv`) and the frees of what they sent, "
                          "issued together as PyTorch's batch_isend_irecv (take a received value with `recv` after "
                          "the group), or collectives coalesced into one call (DDP's bucket); with lets, loops and "
                          "branches around them");
  }

  DiagnosticEngine &diags_;
  const ir::Stmt *firstP2p_ = nullptr, *firstCollective_ = nullptr, *firstFree_ = nullptr;
};

} // namespace

// A group is one NCCL group call: either what PyTorch's batch_isend_irecv takes (sends and
// posted receives, each issued in order, those with one peer completing together) or
// collectives coalesced into one call (DDP's bucket, PyTorch's _coalescing_manager).
void FunctionLowering::groupStmt(const ast::GroupStmt &s, ir::Block &out) {
  ir::Block body = block(*s.body);
  GroupContents contents(diags_);
  contents.block(body);
  contents.finish();
  emit(out, s.range, ir::GroupStmt{std::move(body)});
}

void FunctionLowering::exprStmt(const ast::ExprStmt &s, ir::Block &out) {
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

void FunctionLowering::procCall(const ast::CallExpr &call, uint32_t callee, ir::Block &out) {
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

std::optional<ir::StorageRef> FunctionLowering::target(const ast::Target &t, bool isFree) {
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

std::optional<ir::StorageRef> FunctionLowering::storageRef(const std::string &name, SourceRange nameRange,
                                                           const std::vector<ast::ExprPtr> &indices,
                                                           SourceRange range) {
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

} // namespace schedc::sema
