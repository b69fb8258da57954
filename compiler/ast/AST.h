// AST — the syntax tree of one .sched file, as the parser produces it and before any names
// are resolved. Every node carries the source range it came from. Nodes are plain structs
// tagged with a kind enum; `dyn<T>()` is the checked downcast. The AST knows nothing of
// ANTLR (compiler/parse/ converts the parse tree into it) and nothing of types (sema/ checks
// it and builds the typed IR in compiler/ir/).
#pragma once

#include "diagnostics/SourceManager.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace schedc::ast {

// ---- Expressions ---------------------------------------------------------------------------

enum class ExprKind { Int, Bool, Name, Index, Call, Set, Unary, Binary };

struct Expr {
  explicit Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Expr() = default;
  template <class T> const T *dyn() const { return kind == T::kKind ? static_cast<const T *>(this) : nullptr; }

  ExprKind kind;
  SourceRange range;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Int;
  IntExpr(SourceRange r, int64_t v) : Expr(kKind, r), value(v) {}
  int64_t value;
};

struct BoolExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Bool;
  BoolExpr(SourceRange r, bool v) : Expr(kKind, r), value(v) {}
  bool value;
};

// A bare identifier: a variable, parameter, built-in (`rank`, ...) or mesh axis.
struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  NameExpr(SourceRange r, std::string n) : Expr(kKind, r), name(std::move(n)) {}
  std::string name;
};

// A read of indexed storage: `act[l, mb]`.
struct IndexExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Index;
  IndexExpr(SourceRange r) : Expr(kKind, r) {}
  std::string name;
  SourceRange nameRange;
  std::vector<ExprPtr> indices;
};

// A call argument, positional (`name` empty) or named (`shard = rank`).
struct Arg {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

// An operation, a built-in function or a procedure call: `forward(l, act[l], w[l])`.
struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  CallExpr(SourceRange r) : Expr(kKind, r) {}
  std::string callee;
  SourceRange calleeRange;
  std::vector<Arg> args;
};

// A set literal `{0, 2, rank}`; elements may themselves be sets or ranges (unioned).
struct SetExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Set;
  SetExpr(SourceRange r) : Expr(kKind, r) {}
  std::vector<ExprPtr> elems;
};

enum class UnaryOp { Neg, Not };

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryExpr(SourceRange r, UnaryOp o, ExprPtr e) : Expr(kKind, r), op(o), operand(std::move(e)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp { Mul, Div, Mod, Add, Sub, Range, Lt, Le, Gt, Ge, In, Eq, Ne, And, Or };

struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryExpr(SourceRange r, BinaryOp o, SourceRange opr, ExprPtr l, ExprPtr rhs)
      : Expr(kKind, r), op(o), opRange(opr), lhs(std::move(l)), rhs(std::move(rhs)) {}
  BinaryOp op;
  SourceRange opRange;
  ExprPtr lhs, rhs;
};

const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);

// ---- Statements ----------------------------------------------------------------------------

enum class StmtKind { Let, Assign, Free, If, For, Mesh, Require, Overlap, Group, Expr, Block };

struct Stmt {
  explicit Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Stmt() = default;
  template <class T> const T *dyn() const { return kind == T::kKind ? static_cast<const T *>(this) : nullptr; }

  StmtKind kind;
  SourceRange range;
};
using StmtPtr = std::unique_ptr<Stmt>;

// The left side of an assignment or an operand of `free`: `act[l, mb]` (or a bare name,
// which sema rejects with a helpful message).
struct Target {
  std::string name;
  SourceRange nameRange;
  SourceRange range;
  bool indexed = false;
  std::vector<ExprPtr> indices;
};

struct LetStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Let;
  LetStmt(SourceRange r) : Stmt(kKind, r) {}
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  AssignStmt(SourceRange r) : Stmt(kKind, r) {}
  std::vector<Target> targets;
  ExprPtr value;
};

struct FreeStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Free;
  FreeStmt(SourceRange r) : Stmt(kKind, r) {}
  std::vector<Target> targets;
};

struct BlockStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Block;
  BlockStmt(SourceRange r) : Stmt(kKind, r) {}
  std::vector<StmtPtr> stmts;
};

struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  IfStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr cond;
  std::unique_ptr<BlockStmt> then;
  StmtPtr otherwise; // null, a BlockStmt or an IfStmt
};

struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  ForStmt(SourceRange r) : Stmt(kKind, r) {}
  std::string var;
  SourceRange varRange;
  bool reversed = false;
  ExprPtr domain;
  std::unique_ptr<BlockStmt> body;
};

struct MeshAxis {
  std::string name;
  SourceRange nameRange;
  ExprPtr size;
};

struct MeshStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Mesh;
  MeshStmt(SourceRange r) : Stmt(kKind, r) {}
  std::vector<MeshAxis> axes;
};

// `require(cond, "message");`: the run stops with the message where `cond` does not hold.
struct RequireStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Require;
  RequireStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr cond;
  std::string message;
};

// `overlap { first } with { second }`: two computations run as one overlapped pair
// (DualPipe's F&B, PyTorch's OVERLAP_F_B).
struct OverlapStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Overlap;
  OverlapStmt(SourceRange r) : Stmt(kKind, r) {}
  std::unique_ptr<BlockStmt> first, second;
};

// `group { ... }`: sends and posted receives issued together, which complete together
// (PyTorch's batch_isend_irecv, NCCL's group).
struct GroupStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Group;
  GroupStmt(SourceRange r) : Stmt(kKind, r) {}
  std::unique_ptr<BlockStmt> body;
};

struct ExprStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Expr;
  ExprStmt(SourceRange r, ExprPtr e) : Stmt(kKind, r), expr(std::move(e)) {}
  ExprPtr expr;
};

// ---- Declarations --------------------------------------------------------------------------

struct Param {
  std::string name;
  SourceRange range;
  ExprPtr defaultValue; // may be null
};

// `@target(steps = 17, memory = 2600000)` before a schedule.
struct Attribute {
  std::string name;
  SourceRange nameRange;
  SourceRange range;
  std::vector<Arg> args;
};

struct Import {
  std::string path;
  SourceRange range;
};

// A `schedule` (an entry point with parameters) or a `proc` (a reusable procedure).
struct Function {
  bool isSchedule = false;
  std::string name;
  SourceRange nameRange;
  SourceRange range;
  std::vector<Attribute> attributes;
  std::vector<Param> params;
  std::unique_ptr<BlockStmt> body;
};

struct Module {
  uint32_t file = 0;
  std::vector<Import> imports;
  std::vector<std::unique_ptr<Function>> functions;
};

// Writes an indented, location-annotated dump of `m` (used by `--emit=ast`).
std::string dump(const Module &m, const SourceManager &sources);

} // namespace schedc::ast
