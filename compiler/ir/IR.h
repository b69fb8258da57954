// IR — the typed, name-resolved program that every phase after sema consumes: the checker's
// interpreter (`schedc check`) and LLVM codegen (`schedc build/run`). It is still structured
// (loops stay loops, `if` stays a branch, `rank` and parameters are run-time values), but
// every name is resolved: variables are slot numbers, storage arrays are array ids with a
// static kind, operations are an OpKind (support/ops/Operations.def) with their arguments
// bound to its parameters and defaults filled in, and procedure calls name a function id.
// Every node keeps its source range. Integer/boolean/set computations are `Expr` trees;
// operations on training values (weights, activations, gradients) are `Operation` trees;
// statements are a closed variant. `verify()` checks the invariants after sema builds a
// Program; `dump()` prints it.
#pragma once

#include "diagnostics/InternalError.h"
#include "diagnostics/SourceManager.h"
#include "ops/Operations.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace schedc::ir {

enum class Type : uint8_t {
  Int,
  Bool,
  Set, // a set of integers (batches, ranks, loop domains)
#define VALUE_KIND(Name, name, plural) Name,
#include "ops/ValueKinds.def"
  Value, // a training value whose kind is known only at run time (`recv`)
};
const char *typeName(Type t);
bool isValueType(Type t);
// The kind of a value type (nullopt for Value, known only at run time, and non-values).
std::optional<ValueKind> valueKind(Type t);
// The IR type of a parameter's or a result's type in the operation table (not Operand).
Type typeOf(SigType t);

// ---- Integer, boolean and set expressions --------------------------------------------------

enum class ExprOp : uint8_t {
  Int,       // constant `value`
  Bool,      // constant `value` (0 or 1)
  Var,       // slot `value`
  Rank,      // this rank's number
  Ranks,     // number of ranks (the model parameter)
  Layers,    // number of layers
  Batches,   // number of micro-batches
  AxisCoord, // this rank's coordinate along mesh axis `value`
  AxisSize,  // the size of mesh axis `value`
  Neg,
  Not,
  Add,
  Sub,
  Mul,
  Div,
  Mod, // Div and Mod round toward negative infinity (as in Python)
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Range,  // operands [lo, hi): the set {lo, ..., hi-1}
  SetLit, // union of operands (each an Int element or a Set)
  In,     // Int in Set
  Min,
  Max,    // of one or more Ints
  Size,   // number of elements of a Set
  RankAt, // the rank at the mesh coordinates given by the operands, one per axis in order
  Held,   // whether this rank holds slot operands (the indices) of storage array `value`
};
const char *exprOpName(ExprOp op);

struct Expr {
  ExprOp op = ExprOp::Int;
  Type type = Type::Int;
  int64_t value = 0;
  std::vector<Expr> operands;
  SourceRange range;
};

// ---- Storage and operations on training values --------------------------------------------

// `array[indices...]`: a slot of per-rank storage.
struct StorageRef {
  uint32_t array = 0;
  std::vector<Expr> indices;
  SourceRange range;
};

// Which ranks a collective spans.
struct Group {
  enum Kind : uint8_t { All, Axis, Ranks } kind = All;
  uint32_t axis = 0;       // for Axis: the ranks that share every other mesh coordinate
  std::vector<Expr> ranks; // for Ranks: one Set expression
  SourceRange range;
};

using schedc::OpKind;

// An operation on training values: its arguments bound to the parameters of its signature
// in Operations.def. Int and Set arguments are `exprs`, value arguments `values`, each in
// call order; a Group argument is `group`. Read them by name: `op.expr(param::Load::shard)`.
struct Operation {
  OpKind kind = OpKind::Read;
  std::vector<Expr> exprs;
  std::vector<Operation> values;
  StorageRef ref; // for Read
  Group group;    // for collectives (kind All when not given)
  std::vector<Type> results;
  SourceRange range;

  template <class P> const Expr &expr(P p) const { return exprs[slotOf(p, false)]; }
  template <class P> const Operation &value(P p) const { return values[slotOf(p, true)]; }
  // The argument of parameter `i` (in call order) of this operation, as the executors read
  // them: an Int or Set expression, or a value.
  const Expr &exprAt(size_t i) const { return exprs[opInfo(kind).params[i].slot]; }
  const Operation &valueAt(size_t i) const { return values[opInfo(kind).params[i].slot]; }

private:
  template <class P> size_t slotOf(P p, bool value) const {
    const ParamInfo &info = paramInfo(p);
    SCHEDC_ASSERT(kind == ParamOf<P>::kind && (info.kind == ParamKind::Value) == value,
                  "an operation's argument read through another operation's parameter");
    return info.slot;
  }
};

// ---- Statements ---------------------------------------------------------------------------

struct Stmt;
using Block = std::vector<Stmt>;

struct LetStmt {
  uint32_t slot;
  Expr value;
};
// Stores the results of `op` into `targets` (one per result). With no targets the
// operation runs for its effect (`send`) and any result is dropped.
struct StoreStmt {
  std::vector<StorageRef> targets;
  Operation op;
};
struct FreeStmt {
  std::vector<StorageRef> refs;
};
struct IfStmt {
  Expr cond;
  Block then, otherwise;
};
struct ForStmt {
  uint32_t slot;
  Expr domain; // a Set, iterated in ascending order (descending when `reversed`)
  bool reversed = false;
  Block body;
};
struct CallStmt {
  uint32_t callee; // function id
  std::vector<Expr> args;
};
struct MeshStmt {
  std::vector<Expr> sizes; // one per axis of the enclosing schedule, in declaration order
};
// Stops the run with `message` where `cond` (a Bool) is false.
struct RequireStmt {
  Expr cond;
  std::string message;
  bool sameOnEveryRank = false; // the condition reads nothing that differs between ranks
};

// `overlap { first } with { second }`: the two sides run one after the other (values and
// checks), as one overlapped pair in time (sim::Rank::overlap).
struct OverlapStmt {
  Block first, second;
};

// `group { ... }`: sends and posted receives issued in order as one group, whose operations
// with one peer complete together, or collectives coalesced into one call (sim::Rank::group);
// sema allows nothing else but lets, frees, loops and branches around them.
struct GroupStmt {
  Block body;
};

// A table of instances of template blocks (`shapes`): each row sets the Int slots `holes`
// (the first shapes[row.shape].holes of them) to its values and runs the shape's block as if
// it were written at the row's range: every range inside reads as `at`. An imported PyTorch
// file's rows are tables (interop/ImportSchedule.h), one shape for each form of cell and one
// row a cell, so that a large file is not a statement a cell to parse and keep.
// A shape holds no `require`, call or mesh: sema takes its holes for values every rank
// shares, and a procedure's statements report at their own places.
struct TableStmt {
  struct Shape;
  struct Row {
    uint32_t shape = 0;
    uint32_t firstValue = 0; // into `values`
    SourceRange at;
  };
  std::shared_ptr<const std::vector<Shape>> shapes; // shared by the tables of one import
  std::vector<uint32_t> holes;
  std::vector<Row> rows;
  std::vector<int32_t> values; // (within 32 bits, as an import's numbers are)
};

struct Stmt {
  std::variant<LetStmt, StoreStmt, FreeStmt, IfStmt, ForStmt, CallStmt, MeshStmt, RequireStmt, OverlapStmt, GroupStmt,
               TableStmt>
      node;
  SourceRange range;
};

struct TableStmt::Shape {
  Block body;
  uint32_t holes = 0; // how many of the table's hole slots it reads
};

// ---- Program ------------------------------------------------------------------------------

struct Param {
  std::string name;
  uint32_t slot = 0;
  std::optional<Expr> defaultValue; // procedures never have one; schedules may (else -D)
  SourceRange range;
};

// Puzzle targets declared with `@target(steps = ..., memory = ...)`.
struct Targets {
  std::optional<int64_t> steps;
  std::optional<int64_t> memory;
  SourceRange range;
};

struct Function {
  std::string name;
  bool isSchedule = false;
  std::vector<Param> params;
  std::vector<std::string> slotNames; // one per slot (for dumps and debug info)
  std::vector<std::string> axes;      // mesh axes (schedules only)
  Targets targets;
  // `@p2p(ordered)`: its sends and receives meet as PyTorch's over NCCL do, not by tag
  // (sim/PointToPoint.h); --p2p overrides it.
  bool orderedPointToPoint = false;
  Block body;
  SourceRange range;
  uint32_t callHeight = 0; // the longest chain of calls below this function (0: it calls none)
};

// A storage array. Arrays are global to the program: procedures share the storage of the
// rank that runs them.
struct Array {
  std::string name;
  Type kind = Type::Value;
  SourceRange firstAssigned;
};

struct Program {
  std::vector<Function> functions;
  std::vector<Array> arrays;
  std::optional<uint32_t> entry; // the schedule to run, if one was chosen
};

// Checks the IR's invariants (types, slot and id ranges). Returns the first violation, or
// an empty string. A violation is a compiler bug, never a user error.
std::string verify(const Program &p);

// A readable dump for `--emit=ir`.
std::string dump(const Program &p, const SourceManager &sources);

} // namespace schedc::ir
