// ASTDump — renders a Module as an indented tree, one node per line with its `line:col`,
// for `schedc --emit=ast` and the parser's lit tests.
#include "ast/AST.h"

#include "diagnostics/InternalError.h"

#include <sstream>

namespace schedc::ast {

const char *spelling(UnaryOp op) {
  return op == UnaryOp::Neg ? "-" : "!";
}

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Range: return "..";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::In: return "in";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  }
  SCHEDC_UNREACHABLE("a binary operator without a spelling");
}

namespace {

class Dumper {
public:
  explicit Dumper(std::ostringstream &os) : os_(os) {}

  void module(const Module &m, const SourceManager &sources) {
    os_ << "Module \"" << sources.name(m.file) << "\"\n";
    for (const Import &i : m.imports)
      line(1, i.range) << "Import \"" << i.path << "\"\n";
    for (const auto &f : m.functions)
      function(*f);
  }

private:
  std::ostream &line(int depth, const SourceRange &r) {
    for (int i = 0; i < depth; ++i)
      os_ << "  ";
    os_ << r.begin.line << ":" << r.begin.col << " ";
    return os_;
  }

  void function(const Function &f) {
    line(1, f.range) << (f.isSchedule ? "Schedule " : "Proc ") << f.name << "\n";
    for (const Attribute &a : f.attributes) {
      line(2, a.range) << "Attribute " << a.name << "\n";
      args(3, a.args);
    }
    for (const Param &p : f.params) {
      line(2, p.range) << "Param " << p.name << "\n";
      if (p.defaultValue)
        expr(3, *p.defaultValue);
    }
    stmt(2, *f.body);
  }

  void args(int depth, const std::vector<Arg> &as) {
    for (const Arg &a : as) {
      if (a.name.empty()) {
        expr(depth, *a.value);
      } else {
        line(depth, a.nameRange) << "NamedArg " << a.name << "\n";
        expr(depth + 1, *a.value);
      }
    }
  }

  void target(int depth, const Target &t) {
    line(depth, t.range) << "Target " << t.name << (t.indexed ? "[]" : "") << "\n";
    for (const auto &e : t.indices)
      expr(depth + 1, *e);
  }

  void stmt(int d, const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Let: {
      auto &x = *s.dyn<LetStmt>();
      line(d, s.range) << "Let " << x.name << "\n";
      expr(d + 1, *x.value);
      break;
    }
    case StmtKind::Assign: {
      auto &x = *s.dyn<AssignStmt>();
      line(d, s.range) << "Assign\n";
      for (const Target &t : x.targets)
        target(d + 1, t);
      expr(d + 1, *x.value);
      break;
    }
    case StmtKind::Free: {
      line(d, s.range) << "Free\n";
      for (const Target &t : s.dyn<FreeStmt>()->targets)
        target(d + 1, t);
      break;
    }
    case StmtKind::If: {
      auto &x = *s.dyn<IfStmt>();
      line(d, s.range) << "If\n";
      expr(d + 1, *x.cond);
      stmt(d + 1, *x.then);
      if (x.otherwise)
        stmt(d + 1, *x.otherwise);
      break;
    }
    case StmtKind::For: {
      auto &x = *s.dyn<ForStmt>();
      line(d, s.range) << "For " << x.var << (x.reversed ? " reversed" : "") << "\n";
      expr(d + 1, *x.domain);
      stmt(d + 1, *x.body);
      break;
    }
    case StmtKind::Mesh: {
      line(d, s.range) << "Mesh\n";
      for (const MeshAxis &a : s.dyn<MeshStmt>()->axes) {
        line(d + 1, a.nameRange) << "Axis " << a.name << "\n";
        expr(d + 2, *a.size);
      }
      break;
    }
    case StmtKind::Require:
      line(d, s.range) << "Require \"" << s.dyn<RequireStmt>()->message << "\"\n";
      expr(d + 1, *s.dyn<RequireStmt>()->cond);
      break;
    case StmtKind::Overlap:
      line(d, s.range) << "Overlap\n";
      stmt(d + 1, *s.dyn<OverlapStmt>()->first);
      stmt(d + 1, *s.dyn<OverlapStmt>()->second);
      break;
    case StmtKind::Group:
      line(d, s.range) << "Group\n";
      stmt(d + 1, *s.dyn<GroupStmt>()->body);
      break;
    case StmtKind::Expr:
      line(d, s.range) << "ExprStmt\n";
      expr(d + 1, *s.dyn<ExprStmt>()->expr);
      break;
    case StmtKind::Block:
      line(d, s.range) << "Block\n";
      for (const auto &c : s.dyn<BlockStmt>()->stmts)
        stmt(d + 1, *c);
      break;
    }
  }

  void expr(int d, const Expr &e) {
    switch (e.kind) {
    case ExprKind::Int: line(d, e.range) << "Int " << e.dyn<IntExpr>()->value << "\n"; break;
    case ExprKind::Bool: line(d, e.range) << "Bool " << (e.dyn<BoolExpr>()->value ? "true" : "false") << "\n"; break;
    case ExprKind::Name: line(d, e.range) << "Name " << e.dyn<NameExpr>()->name << "\n"; break;
    case ExprKind::Index: {
      auto &x = *e.dyn<IndexExpr>();
      line(d, e.range) << "Index " << x.name << "\n";
      for (const auto &i : x.indices)
        expr(d + 1, *i);
      break;
    }
    case ExprKind::Call: {
      auto &x = *e.dyn<CallExpr>();
      line(d, e.range) << "Call " << x.callee << "\n";
      args(d + 1, x.args);
      break;
    }
    case ExprKind::Set:
      line(d, e.range) << "Set\n";
      for (const auto &i : e.dyn<SetExpr>()->elems)
        expr(d + 1, *i);
      break;
    case ExprKind::Unary: {
      auto &x = *e.dyn<UnaryExpr>();
      line(d, e.range) << "Unary " << spelling(x.op) << "\n";
      expr(d + 1, *x.operand);
      break;
    }
    case ExprKind::Binary: {
      auto &x = *e.dyn<BinaryExpr>();
      line(d, e.range) << "Binary " << spelling(x.op) << "\n";
      expr(d + 1, *x.lhs);
      expr(d + 1, *x.rhs);
      break;
    }
    }
  }

  std::ostringstream &os_;
};

} // namespace

std::string dump(const Module &m, const SourceManager &sources) {
  std::ostringstream os;
  Dumper(os).module(m, sources);
  return os.str();
}

} // namespace schedc::ast
