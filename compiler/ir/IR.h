// IR — the typed, name-resolved program that every phase after sema consumes: the checker's
// interpreter (`schedc check`) and LLVM codegen (`schedc build/run`). It is still structured
// (loops stay loops, `if` stays a branch, `rank` and parameters are run-time values), but
// every name is resolved: variables are slot numbers, storage arrays are array ids with a
// static kind, operations are an enum with their arguments in a fixed order and defaults
// filled in, and procedure calls name a function id. Every node keeps its source range.
// Integer/boolean/set computations are `Expr` trees; operations on training values
// (weights, activations, gradients) are `Operation` trees; statements are a closed variant.
// `verify()` checks the invariants after sema builds a Program; `dump()` prints it.
#pragma once

#include "diagnostics/SourceManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace schedc::ir {

enum class Type : uint8_t {
  Int,
  Bool,
  Set, // a set of integers (batches, ranks, loop domains)
  Weight,
  OptState,
  Activation,
  ActGrad,
  WeightGrad,
  Value, // a training value whose kind is known only at run time (`recv`)
};
const char *typeName(Type t);
bool isValueType(Type t);

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

enum class OpKind : uint8_t {
  Read,           // the value held in `ref`
  Load,           // ints: layer, shard, of                  -> Weight, OptState
  Input,          // ints: batches (Set)                     -> Activation
  Forward,        // ints: layer; values: input, weight      -> Activation
  Backward,       // ints: layer; values: input, grad, weight -> WeightGrad, ActGrad
  Loss,           // values: input                           -> ActGrad
  Update,         // ints: layer; values: grad, weight, opt  -> Weight, OptState
  AddGrad,        // values: lhs, rhs                        -> WeightGrad
  AllReduce,      // values: grad; group                     -> WeightGrad
  AllGather,      // values: weight; group                   -> Weight
  ReduceScatter,  // values: grad; group                     -> WeightGrad
  Recv,           // ints: source rank, tag                  -> Value
  FakeGrad,       // ints: layer, batches (Set)              -> WeightGrad
  Shard,          // ints: shard, of; values: value          -> the value's type (one shard of it)
  BackwardInput,  // ints: layer; values: input, grad, weight -> ActGrad (half of backward)
  BackwardWeight, // ints: layer; values: input, grad, weight -> WeightGrad (the other half)
};
const char *opKindName(OpKind k);
bool isCollective(OpKind k);

struct Operation {
  OpKind kind = OpKind::Read;
  std::vector<Expr> ints;
  std::vector<Operation> values;
  StorageRef ref; // for Read
  Group group;    // for collectives
  std::vector<Type> results;
  SourceRange range;
};

// ---- Statements ---------------------------------------------------------------------------

struct Stmt;
using Block = std::vector<Stmt>;

struct LetStmt {
  uint32_t slot;
  Expr value;
};
// Stores the results of `op` into `targets` (one per result). With no targets the
// operation runs for its effect and its result is dropped.
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
struct SendStmt {
  Expr dest;
  Operation value;
  Expr tag; // messages are matched per (source, tag), first in first out
};
struct MeshStmt {
  std::vector<Expr> sizes; // one per axis of the enclosing schedule, in declaration order
};

struct Stmt {
  std::variant<LetStmt, StoreStmt, FreeStmt, IfStmt, ForStmt, CallStmt, SendStmt, MeshStmt> node;
  SourceRange range;
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
