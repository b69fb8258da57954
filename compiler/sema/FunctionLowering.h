// FunctionLowering — checks one schedule or procedure and builds its IR. Names resolve
// through block scopes (parameters, `let`, loop variables, mesh axes) and then the
// built-ins (`rank`, `ranks`, `layers`, `batches`). Each expression is typed; a mistake
// yields an error value (`Typed::bad`) that silences every check depending on it, so one
// mistake is reported once. Operation calls are bound against the signatures in
// Operations.cpp; statements follow the language reference (docs/language.md).
//
// The class is declared here and defined in four files, one per part: FunctionLowering.cpp
// (scopes, parameters, attributes), LowerStatements.cpp, LowerExpressions.cpp and
// LowerCalls.cpp. Internal to compiler/sema/.
#pragma once

#include "sema/Operations.h"
#include "sema/SemaContext.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::sema {

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
  void run();

private:
  // ---- Scopes ------------------------------------------------------------------------------

  struct Symbol {
    enum Kind { Slot, Axis } kind;
    uint32_t index;
    Type type;
    SourceRange defined;
  };

  const Symbol *lookup(const std::string &name) const;

  // Defines a name in the innermost scope; reports a clash with any visible name.
  bool define(const std::string &name, SourceRange at, Symbol sym);
  // A new slot; `sameOnEveryRank`: what it holds does not depend on the rank (a schedule's
  // parameter, or a `let` or loop variable computed from such values alone).
  uint32_t newSlot(const std::string &name, bool sameOnEveryRank = false);
  // Whether `e` has the same value on every rank: it reads no `rank`, mesh coordinate or
  // storage (`held`), and only slots that are the same on every rank.
  bool sameOnEveryRank(const ir::Expr &e) const;
  // Moves a schedule's top-level requirements that read only what is the same on every rank
  // (and the lets and mesh they may read) before everything else in its body, keeping their
  // order: a broken precondition is then reported before anything it would cause.
  void hoistRequirements(ir::Block &body) const;

  // ---- Header ------------------------------------------------------------------------------

  void params();
  void attributes();
  void pointToPoint(const ast::Attribute &a);

  // ---- Statements --------------------------------------------------------------------------

  ir::Block block(const ast::BlockStmt &b, bool topLevel = false);
  void emit(ir::Block &out, SourceRange r, auto node) { out.push_back(ir::Stmt{std::move(node), r}); }
  void statement(const ast::Stmt &s, ir::Block &out, bool topLevel);
  void letStmt(const ast::LetStmt &s, ir::Block &out);
  void assignStmt(const ast::AssignStmt &s, ir::Block &out);
  void freeStmt(const ast::FreeStmt &s, ir::Block &out);
  void ifStmt(const ast::IfStmt &s, ir::Block &out);
  void forStmt(const ast::ForStmt &s, ir::Block &out);
  void meshStmt(const ast::MeshStmt &s, ir::Block &out, bool topLevel);
  void requireStmt(const ast::RequireStmt &s, ir::Block &out);
  void overlapStmt(const ast::OverlapStmt &s, ir::Block &out);
  void groupStmt(const ast::GroupStmt &s, ir::Block &out);
  void exprStmt(const ast::ExprStmt &s, ir::Block &out);
  void procCall(const ast::CallExpr &call, uint32_t callee, ir::Block &out);

  // A storage target (of an assignment or `free`).
  std::optional<ir::StorageRef> target(const ast::Target &t, bool isFree);
  std::optional<ir::StorageRef> storageRef(const std::string &name, SourceRange nameRange,
                                           const std::vector<ast::ExprPtr> &indices, SourceRange range);

  // ---- Expressions -------------------------------------------------------------------------

  static ir::Expr leaf(ir::ExprOp op, Type t, int64_t v, SourceRange r) { return ir::Expr{op, t, v, {}, r}; }
  std::optional<ir::Expr> typedExpr(const ast::Expr &e, Type want, const std::string &what);
  std::optional<ir::Expr> intExpr(const ast::Expr &e, const std::string &what) { return typedExpr(e, Type::Int, what); }
  std::optional<ir::Expr> boolExpr(const ast::Expr &e);
  static Typed plain(ir::Expr e);
  static Typed value(ir::Operation op);
  Typed expr(const ast::Expr &e);
  Typed name(const ast::NameExpr &e);
  Typed read(const ast::IndexExpr &e);
  Typed setLiteral(const ast::SetExpr &e);
  Typed unary(const ast::UnaryExpr &e);
  Typed binary(const ast::BinaryExpr &e);
  bool gradOperand(const Typed &v, const ast::Expr &e);

  // ---- Calls -------------------------------------------------------------------------------

  Typed call(const ast::CallExpr &c);
  Typed builtinFunction(const ast::CallExpr &c);

  // rank_at(axis = coordinate, ...): the rank at those coordinates of the mesh, this rank's
  // own on the axes not named (a neighbour along an axis: rank_at(stage = stage + 1)).
  Typed rankAt(const ast::CallExpr &c);
  Typed held(const ast::CallExpr &c);
  static std::string joinNames(const std::vector<std::string> &names);

  // Matches call arguments to the signature's parameters (positional, then named).
  // `bound[i]` is the argument for parameter i, or null if it was omitted (and optional).
  bool bindArgs(const ast::CallExpr &c, const OpInfo &sig, std::vector<const ast::Expr *> &bound);
  Typed operation(const ast::CallExpr &c, OpKind kind);

  // `shard` takes a value that is sharded: a weight, an optimizer state or a weight gradient
  // (a value from `recv` is checked when it runs).
  std::optional<ir::Operation> valueOperand(const ast::Expr &e, const ParamInfo &p, const std::string &callee);
  std::optional<ir::Group> group(const ast::Expr &e);
  static std::string describeOp(const ir::Operation &op);
  const ast::Function &ast_;
  uint32_t id_;
  SemaContext &ctx_;
  ir::Function &out_;
  DiagnosticEngine &diags_;
  std::vector<std::map<std::string, Symbol>> scopes_;
  std::vector<bool> slotSameOnEveryRank_; // by slot
  std::vector<std::string> laterParams_;  // while checking a default: this and later parameters
  bool definingParams_ = false;
  bool inOverlap_ = false; // lowering a side of an `overlap`
  SourceRange meshAt_;
};

} // namespace schedc::sema
