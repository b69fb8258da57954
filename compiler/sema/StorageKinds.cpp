// StorageKinds — infers the kind of each storage array (weight, activation, ...) before the
// functions are checked, so operand kinds can be checked statically wherever a value is
// read. A kind comes from the operations assigned to an array; a copy (`w[l, 0] = w[l]`)
// takes the source's kind, and so does a shard of it (`o[l] = shard(opt[l], ...)`); `recv` says nothing (its kind is
// known only at run time). An array assigned two different kinds is an error, with a note at the first assignment.
#include "sema/Operations.h"
#include "sema/SemaContext.h"

#include <algorithm>
#include <set>

namespace schedc::sema {

namespace {

struct Copy {
  std::string to, from;
  SourceRange range;
};

class KindCollector {
public:
  explicit KindCollector(SemaContext &ctx) : ctx_(ctx) {}

  void function(const ast::Function &f) { stmt(*f.body); }

  void resolveCopies() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const Copy &c : copies_) {
        auto from = ctx_.arrayIds.find(c.from);
        if (from == ctx_.arrayIds.end())
          continue;
        ir::Type t = ctx_.program.arrays[from->second].kind;
        if (t != ir::Type::Value && unify(c.to, t, c.range))
          changed = true;
      }
    }
  }

private:
  void stmt(const ast::Stmt &s) {
    switch (s.kind) {
    case ast::StmtKind::Assign: assign(*s.dyn<ast::AssignStmt>()); break;
    case ast::StmtKind::If: {
      auto &x = *s.dyn<ast::IfStmt>();
      stmt(*x.then);
      if (x.otherwise)
        stmt(*x.otherwise);
      break;
    }
    case ast::StmtKind::For: stmt(*s.dyn<ast::ForStmt>()->body); break;
    case ast::StmtKind::Overlap:
      stmt(*s.dyn<ast::OverlapStmt>()->first);
      stmt(*s.dyn<ast::OverlapStmt>()->second);
      break;
    case ast::StmtKind::Group: stmt(*s.dyn<ast::GroupStmt>()->body); break;
    case ast::StmtKind::Block:
      for (const auto &c : s.dyn<ast::BlockStmt>()->stmts)
        stmt(*c);
      break;
    default: break;
    }
  }

  // For an operation whose result has its value operand's kind (`shard`): the storage read
  // given as that operand, if it is one.
  static const ast::IndexExpr *operandRead(const ast::CallExpr &call, OpKind kind) {
    const OpInfo &info = opInfo(kind);
    if (std::find(info.results.begin(), info.results.end(), SigType::Operand) == info.results.end())
      return nullptr;
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ast::Arg &arg = call.args[i];
      bool named = !arg.name.empty();
      for (size_t k = 0; k < info.params.size(); ++k)
        if (info.params[k].kind == ParamKind::Value && (named ? arg.name == info.params[k].name : i == k))
          return arg.value->dyn<ast::IndexExpr>();
    }
    return nullptr;
  }

  void assign(const ast::AssignStmt &a) {
    std::vector<ir::Type> results;
    const ast::Expr &v = *a.value;
    if (auto *call = v.dyn<ast::CallExpr>()) {
      if (std::optional<OpKind> kind = findOperation(call->callee)) {
        results = resultTypes(*kind);
        if (const ast::IndexExpr *idx = operandRead(*call, *kind)) // a result of its operand's kind
          for (const ast::Target &t : a.targets)
            if (t.indexed)
              copies_.push_back(Copy{t.name, idx->name, t.range});
      }
    } else if (auto *idx = v.dyn<ast::IndexExpr>()) {
      for (const ast::Target &t : a.targets)
        if (t.indexed)
          copies_.push_back(Copy{t.name, idx->name, t.range});
      results = {ir::Type::Value};
    } else if (auto *bin = v.dyn<ast::BinaryExpr>();
               bin && bin->op == ast::BinaryOp::Add &&
               (bin->lhs->dyn<ast::IndexExpr>() || bin->rhs->dyn<ast::IndexExpr>())) {
      results = {ir::Type::WeightGrad};
    }
    for (size_t i = 0; i < a.targets.size() && i < results.size(); ++i)
      if (a.targets[i].indexed)
        unify(a.targets[i].name, results[i], a.targets[i].range);
  }

  // Records that `name` holds `t`. Returns true if the array's kind changed.
  bool unify(const std::string &name, ir::Type t, SourceRange at) {
    auto [it, inserted] = ctx_.arrayIds.try_emplace(name, static_cast<uint32_t>(ctx_.program.arrays.size()));
    if (inserted) {
      ctx_.program.arrays.push_back(ir::Array{name, t, at});
      return true;
    }
    ir::Array &a = ctx_.program.arrays[it->second];
    if (t == ir::Type::Value || a.kind == t)
      return false;
    if (a.kind == ir::Type::Value) {
      a.kind = t;
      a.firstAssigned = at;
      return true;
    }
    if (reported_.insert(name).second)
      ctx_.diags
          .error(at, "storage `" + name + "` is assigned " + withArticle(t) + " here, but it holds " +
                         withArticle(a.kind) + " elsewhere")
          .note(a.firstAssigned, "`" + name + "` is first assigned " + withArticle(a.kind) + " here");
    return false;
  }

  SemaContext &ctx_;
  std::vector<Copy> copies_;
  std::set<std::string> reported_;
};

} // namespace

void inferStorageKinds(const std::vector<std::unique_ptr<ast::Module>> &modules, SemaContext &ctx) {
  KindCollector c(ctx);
  for (const auto &m : modules)
    for (const auto &f : m->functions)
      c.function(*f);
  c.resolveCopies();
}

} // namespace schedc::sema
