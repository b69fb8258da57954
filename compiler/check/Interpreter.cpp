// Interpreter implementation: a tree-walking evaluator over the IR. Sets are kept lazily as
// ranges where possible (a loop over `0..n` never builds a set); everything that touches
// training values goes through sim::Rank.
#include "check/Interpreter.h"

#include "engine/Execute.h"
#include "engine/Fiber.h"
#include "sim/Arith.h"

#include <algorithm>
#include <memory>

namespace schedc::check {

namespace {

using sim::IntSet;
using sim::makeSet;
using sim::SetPtr;
using sim::ValuePtr;

// A set at run time: a half-open range, or explicit elements.
struct SetValue {
  bool isRange = true;
  int64_t lo = 0, hi = 0;
  SetPtr elems;

  int64_t size() const { return isRange ? std::max<int64_t>(0, hi - lo) : static_cast<int64_t>(elems->size()); }
  bool contains(int64_t v) const { return isRange ? v >= lo && v < hi : elems->contains(v); }
};

struct RtValue {
  int64_t i = 0; // Int, and Bool as 0/1
  SetValue set;
};

// Where an expression is evaluated: a rank (with its slots), or the parameter defaults.
class Evaluator {
public:
  Evaluator(std::vector<RtValue> &slots, const sim::Model *model) : slots_(slots), model_(model) {}
  virtual ~Evaluator() = default;

  RtValue eval(const ir::Expr &e) {
    if (e.type != ir::Type::Set)
      return {evalLeafOrInt(e), {}};
    switch (e.op) {
    case ir::ExprOp::Var: return slots_[static_cast<size_t>(e.value)];
    case ir::ExprOp::Range: {
      RtValue v;
      v.set.lo = evalInt(e.operands[0]);
      v.set.hi = evalInt(e.operands[1]);
      return v;
    }
    case ir::ExprOp::SetLit: return setLiteral(e);
    default: break;
    }
    SCHEDC_UNREACHABLE("a set expression the interpreter does not know");
  }

  // evalInt for the leaves most integers are (a variable, a literal) without a call: indices,
  // operands of arithmetic and integer arguments are mostly these.
  int64_t evalLeafOrInt(const ir::Expr &e) {
    if (e.op == ir::ExprOp::Var)
      return slots_[static_cast<size_t>(e.value)].i;
    if (e.op == ir::ExprOp::Int)
      return e.value;
    return evalInt(e);
  }

  // An integer or boolean expression (0 or 1): the hot path of every index, condition and
  // argument, without a set-carrying RtValue for each node.
  int64_t evalInt(const ir::Expr &e) {
    switch (e.op) {
    case ir::ExprOp::Int:
    case ir::ExprOp::Bool: return e.value;
    case ir::ExprOp::Var: return slots_[static_cast<size_t>(e.value)].i;
    case ir::ExprOp::Add:
    case ir::ExprOp::Sub:
    case ir::ExprOp::Mul:
    case ir::ExprOp::Div:
    case ir::ExprOp::Mod: return arithmetic(e);
    case ir::ExprOp::Lt: return compare(e, [](int64_t a, int64_t b) { return a < b; });
    case ir::ExprOp::Le: return compare(e, [](int64_t a, int64_t b) { return a <= b; });
    case ir::ExprOp::Gt: return compare(e, [](int64_t a, int64_t b) { return a > b; });
    case ir::ExprOp::Ge: return compare(e, [](int64_t a, int64_t b) { return a >= b; });
    default: return evalOtherInt(e);
    }
  }

  // The rest of evalInt: kept out of its frame, so that the common cases above (a literal, a
  // variable, arithmetic, a comparison) do not pay for these cases' locals on every call.
  [[gnu::noinline]] int64_t evalOtherInt(const ir::Expr &e) {
    switch (e.op) {
    case ir::ExprOp::Rank: return rankId(e.range);
    case ir::ExprOp::Ranks: return model_ ? model_->ranks : 1;
    case ir::ExprOp::Layers: return model_ ? model_->layers : 0;
    case ir::ExprOp::Batches: return model_ ? model_->batches : 0;
    case ir::ExprOp::AxisCoord: return axisCoord(static_cast<size_t>(e.value), e.range);
    case ir::ExprOp::AxisSize: return axisSize(static_cast<size_t>(e.value), e.range);
    case ir::ExprOp::Held: return heldAt(e);
    case ir::ExprOp::RankAt: return rankAtCoords(e);
    case ir::ExprOp::Neg: return checked(0, evalInt(e.operands[0]), '-', e.range);
    case ir::ExprOp::Not: return !evalInt(e.operands[0]);
    case ir::ExprOp::Eq:
    case ir::ExprOp::Ne: return equality(e);
    case ir::ExprOp::And: return evalInt(e.operands[0]) && evalInt(e.operands[1]);
    case ir::ExprOp::Or: return evalInt(e.operands[0]) || evalInt(e.operands[1]);
    case ir::ExprOp::In: return inSet(e);
    case ir::ExprOp::Min:
    case ir::ExprOp::Max: {
      int64_t best = evalInt(e.operands[0]);
      for (size_t i = 1; i < e.operands.size(); ++i) {
        int64_t v = evalInt(e.operands[i]);
        best = e.op == ir::ExprOp::Min ? std::min(best, v) : std::max(best, v);
      }
      return best;
    }
    case ir::ExprOp::Size: return sizeOf(e);
    case ir::ExprOp::Int: // evalInt's own cases
    case ir::ExprOp::Bool:
    case ir::ExprOp::Var:
    case ir::ExprOp::Add:
    case ir::ExprOp::Sub:
    case ir::ExprOp::Mul:
    case ir::ExprOp::Div:
    case ir::ExprOp::Mod:
    case ir::ExprOp::Lt:
    case ir::ExprOp::Le:
    case ir::ExprOp::Gt:
    case ir::ExprOp::Ge: return evalInt(e);
    case ir::ExprOp::Range:
    case ir::ExprOp::SetLit: break;
    }
    SCHEDC_UNREACHABLE("an integer expression the interpreter does not know");
  }

  // held(x[i, j]), rank_at(a, b), `i in s` and size(s), out of evalOtherInt: their vectors
  // and sets would be in its frame, once for each level of an expression such as `!!!x` or
  // `a && b && c`.
  [[gnu::noinline]] int64_t inSet(const ir::Expr &e) {
    SetValue s = eval(e.operands[1]).set; // the set first, as compiled code does
    return s.contains(evalInt(e.operands[0]));
  }
  [[gnu::noinline]] int64_t sizeOf(const ir::Expr &e) { return eval(e.operands[0]).set.size(); }
  [[gnu::noinline]] int64_t heldAt(const ir::Expr &e) {
    sim::SlotIndex index;
    for (const ir::Expr &o : e.operands)
      index.push_back(evalInt(o));
    return held(static_cast<uint32_t>(e.value), index) ? 1 : 0;
  }
  [[gnu::noinline]] int64_t rankAtCoords(const ir::Expr &e) {
    std::vector<int64_t> coords;
    for (const ir::Expr &o : e.operands)
      coords.push_back(evalInt(o));
    return rankAt(coords, e.range);
  }

  // a + b, a - b, a * b, a / b, a % b: checked as compiled code checks them.
  int64_t arithmetic(const ir::Expr &e) {
    int64_t a = evalLeafOrInt(e.operands[0]), b = evalLeafOrInt(e.operands[1]);
    char op = e.op == ir::ExprOp::Add   ? '+'
              : e.op == ir::ExprOp::Sub ? '-'
              : e.op == ir::ExprOp::Mul ? '*'
              : e.op == ir::ExprOp::Div ? '/'
                                        : '%';
    if (op != '/' && op != '%')
      if (std::optional<int64_t> r = sim::addSubMul(op, a, b))
        return *r; // no error to say: the common case, without checked's message string
    return checked(a, b, op, e.range);
  }

  // == and != of integers or sets; the sets' out of line (they would be in evalOtherInt's frame).
  int64_t equality(const ir::Expr &e) {
    if (e.operands[0].type == ir::Type::Set)
      return setEquality(e);
    int64_t a = evalInt(e.operands[0]);
    bool eq = a == evalInt(e.operands[1]);
    return e.op == ir::ExprOp::Eq ? eq : !eq;
  }
  [[gnu::noinline]] int64_t setEquality(const ir::Expr &e) {
    RtValue a = eval(e.operands[0]);
    RtValue b = eval(e.operands[1]);
    IntSet x = materialize(a.set, e.range);
    bool eq = x == materialize(b.set, e.range);
    return e.op == ir::ExprOp::Eq ? eq : !eq;
  }

  // {a, b, s...}: integers and the elements of sets, within the size limit.
  RtValue setLiteral(const ir::Expr &e) {
    std::vector<int64_t> elems;
    for (const ir::Expr &o : e.operands) {
      if (o.type == ir::Type::Int) {
        elems.push_back(evalInt(o));
      } else {
        const IntSet &s = materialize(eval(o).set, o.range);
        elems.insert(elems.end(), s.elements().begin(), s.elements().end());
      }
      if (static_cast<int64_t>(elems.size()) > kMaxSetSize)
        return tooLarge(static_cast<int64_t>(elems.size()), o.range);
    }
    RtValue v;
    v.set.isRange = false;
    v.set.elems = makeSet(std::move(elems));
    return v;
  }

  // A set as one shared set: its elements if it has them already, else built (within the
  // size limit).
  SetPtr shared(const SetValue &s, SourceRange at) { return s.isRange ? makeSet(materialize(s, at)) : s.elems; }

  // The elements of a set (built on demand, within the size limit).
  IntSet materialize(const SetValue &s, SourceRange at) {
    if (!s.isRange)
      return *s.elems;
    if (s.size() > kMaxSetSize) {
      tooLarge(s.size(), at);
      return IntSet();
    }
    return IntSet::range(s.lo, s.hi);
  }

protected:
  virtual void fail(SourceRange at, std::string message) = 0;
  virtual int64_t rankId(SourceRange at) = 0;
  virtual int64_t axisCoord(size_t axis, SourceRange at) = 0;
  virtual int64_t axisSize(size_t axis, SourceRange at) = 0;
  virtual int64_t rankAt(const std::vector<int64_t> &coords, SourceRange at) = 0;
  virtual bool held(uint32_t array, const sim::SlotIndex &index) = 0;

  RtValue tooLarge(int64_t n, SourceRange at) {
    fail(at, "this set has " + std::to_string(n) + " elements, more than the limit of " + std::to_string(kMaxSetSize));
    RtValue v;
    v.set.isRange = false;
    v.set.elems = makeSet();
    return v;
  }

  // Both operands, left to right, then the comparison.
  template <class Cmp> int64_t compare(const ir::Expr &e, Cmp cmp) {
    int64_t a = evalInt(e.operands[0]);
    int64_t b = evalInt(e.operands[1]);
    return cmp(a, b);
  }

  // Integer arithmetic, with the language's rules (sim/Arith.h).
  int64_t checked(int64_t a, int64_t b, char op, SourceRange at) {
    std::string error;
    std::optional<int64_t> r = sim::arith(op, a, b, error);
    if (!r)
      fail(at, error);
    return r.value_or(0);
  }

  std::vector<RtValue> &slots_;
  const sim::Model *model_;
};

// Evaluates parameter defaults: no rank, no mesh; errors go straight to the diagnostics.
class ParameterEvaluator : public Evaluator {
public:
  ParameterEvaluator(std::vector<RtValue> &slots, DiagnosticEngine &diags) : Evaluator(slots, nullptr), diags_(diags) {}
  bool failed = false;

protected:
  void fail(SourceRange at, std::string message) override {
    if (!failed)
      diags_.error(at, std::move(message));
    failed = true;
  }
  // Sema rejects these in parameter defaults.
  int64_t rankId(SourceRange at) override { return 0; }
  int64_t axisCoord(size_t, SourceRange) override { return 0; }
  int64_t axisSize(size_t, SourceRange) override { return 0; }
  int64_t rankAt(const std::vector<int64_t> &, SourceRange) override { return 0; }
  bool held(uint32_t, const sim::SlotIndex &) override { return false; }

private:
  DiagnosticEngine &diags_;
};

class RankInterpreter : public Evaluator {
public:
  RankInterpreter(const ir::Program &program, const ir::Function &schedule, sim::Rank &rank,
                  std::vector<RtValue> &slots)
      : Evaluator(slots, &rank.model()), program_(program), schedule_(schedule), rank_(rank),
        stackLimit_(stackLimit()) {}

  void run() { block(schedule_.body); }

protected:
  void fail(SourceRange at, std::string message) override {
    if (!rank_.cancelled())
      rank_.fatal(located(at), std::move(message));
  }
  int64_t rankId(SourceRange) override { return rank_.id(); }
  int64_t axisCoord(size_t axis, SourceRange at) override { return rank_.axisCoord(axis, located(at)); }
  int64_t rankAt(const std::vector<int64_t> &coords, SourceRange at) override {
    return rank_.rankAt(coords, located(at));
  }
  int64_t axisSize(size_t axis, SourceRange at) override { return rank_.axisSize(axis, located(at)); }
  bool held(uint32_t array, const sim::SlotIndex &index) override { return rank_.holds(array, index); }

private:
  // Where the frames of nested blocks and calls must stop on a rank's stack: half of it, above
  // its floor, is left for what runs inside a statement (0 off a fiber: no limit), whose
  // deepest is an expression of 10 000 operators nested 10 000 deep (`!!!...x`: ~1.6 MB,
  // evalInt's and evalOtherInt's frames, 160 bytes a level). Sema bounds calls (10 000
  // deep) and the parser nesting (256 levels a function), but not both at once: 1000
  // procedures each calling the next inside 250 nested `if`s overflowed the stack, a crash.
  static uintptr_t stackLimit() {
    uintptr_t floor = sim::Fiber::stackFloor();
    return floor ? floor + sim::Fiber::stackBytes() / 2 : 0;
  }

  // Whether the stack has room for one more level of blocks at `at` (an `if`, a loop, a call
  // or an overlap: every way a block nests in another); if not, stops the run. Checked where
  // a statement nests, not in every block: a loop's iterations are at the same depth, and a
  // check in every block costs every iteration (docs/performance.md, "Figures behind design
  // choices in the code").
  bool room(const SourceRange &at) { return sim::Fiber::stackPointer() >= stackLimit_ || tooDeep(at); }
  [[gnu::noinline]] bool tooDeep(const SourceRange &at) {
    size_t stack = sim::Fiber::stackBytes();
    rank_.stopForWantOf(located(at), "statements and procedure calls nest too deep here for a rank's stack (" +
                                         (stack >= (1 << 20) ? std::to_string(stack >> 20) + " MiB"
                                                             : std::to_string(stack >> 10) + " KiB") +
                                         "); nest them less deeply (fewer levels of calls, loops or `if`s)");
    return false;
  }

  // Runs the statements of a block; false once the run is cancelled.
  [[gnu::noinline]] bool block(const ir::Block &b) {
    for (const ir::Stmt &s : b) {
      if (rank_.cancelled() || !rank_.step(located(s.range)))
        return false;
      statement(s);
    }
    return !rank_.cancelled();
  }

  sim::SlotIndex indices(const ir::StorageRef &r) {
    sim::SlotIndex out;
    for (const ir::Expr &e : r.indices)
      out.push_back(evalLeafOrInt(e));
    return out;
  }

  // Dispatches to one function per kind of statement, so that the statement's frame, which is
  // on a rank's stack once per level of nesting (a loop's body, a procedure's), holds no
  // kind's locals: those are there only while that kind runs.
  void statement(const ir::Stmt &s) {
    if (auto *x = std::get_if<ir::StoreStmt>(&s.node))
      store(*x);
    else if (auto *x = std::get_if<ir::LetStmt>(&s.node))
      let(*x);
    else if (auto *x = std::get_if<ir::FreeStmt>(&s.node))
      free(*x);
    else if (auto *x = std::get_if<ir::IfStmt>(&s.node)) {
      if (room(s.range))
        block(evalInt(x->cond) ? x->then : x->otherwise);
    } else if (auto *x = std::get_if<ir::ForStmt>(&s.node))
      loop(*x);
    else if (auto *x = std::get_if<ir::CallStmt>(&s.node))
      call(*x, s.range);
    else if (auto *x = std::get_if<ir::MeshStmt>(&s.node))
      mesh(*x, located(s.range));
    else if (auto *x = std::get_if<ir::RequireStmt>(&s.node))
      require(*x, located(s.range));
    else if (auto *x = std::get_if<ir::OverlapStmt>(&s.node))
      overlap(*x, located(s.range));
    else if (auto *x = std::get_if<ir::TableStmt>(&s.node))
      table(*x, s.range);
    else if (auto *x = std::get_if<ir::GroupStmt>(&s.node))
      group(*x, located(s.range));
  }

  // Each row of a table: its hole slots set, then its shape's statements at its range.
  [[gnu::noinline]] void table(const ir::TableStmt &t, const SourceRange &at) {
    if (!room(at))
      return;
    const SourceRange *outer = rowAt_;
    for (const ir::TableStmt::Row &row : t.rows) {
      const ir::TableStmt::Shape &shape = (*t.shapes)[row.shape];
      for (uint32_t i = 0; i < shape.holes; ++i)
        slots_[t.holes[i]].i = t.values[row.firstValue + i];
      rowAt_ = &row.at;
      if (!block(shape.body))
        break;
    }
    rowAt_ = outer;
  }

  [[gnu::noinline]] void store(const ir::StoreStmt &x) {
    sim::Results results = operation(x.op);
    if (rank_.cancelled())
      return;
    for (size_t i = 0; i < x.targets.size(); ++i)
      rank_.store(x.targets[i].array, indices(x.targets[i]), std::move(results.values[i]), located(x.targets[i].range));
  }

  [[gnu::noinline]] void let(const ir::LetStmt &x) { slots_[x.slot] = eval(x.value); }

  [[gnu::noinline]] void free(const ir::FreeStmt &x) {
    for (const ir::StorageRef &r : x.refs)
      rank_.free(r.array, indices(r), located(r.range));
  }

  [[gnu::noinline]] void require(const ir::RequireStmt &x, SourceRange at) {
    rank_.require(at, evalInt(x.cond) != 0, x.sameOnEveryRank, x.message);
  }

  [[gnu::noinline]] void group(const ir::GroupStmt &x, SourceRange at) {
    if (!room(at))
      return;
    rank_.group(at, true);
    block(x.body);
    rank_.group(at, false);
  }

  [[gnu::noinline]] void overlap(const ir::OverlapStmt &x, SourceRange at) {
    using Phase = sim::Rank::PairPhase;
    if (!room(at))
      return;
    rank_.overlap(at, Phase::Begin);
    if (!block(x.first))
      return;
    rank_.overlap(at, Phase::Second);
    if (block(x.second))
      rank_.overlap(at, Phase::End);
  }

  // Runs a loop over its domain's elements, in order or reversed. Each iteration runs out of
  // line, so that the loop's frame, on a rank's stack once per level of nesting, keeps only the
  // domain and the position in it.
  [[gnu::noinline]] void loop(const ir::ForStmt &f) {
    if (!room(f.domain.range)) // its domain (the statement's range would cost block() a spill)
      return;
    SetValue d = eval(f.domain).set;
    if (d.isRange) {
      if (!f.reversed) {
        for (int64_t v = d.lo; v < d.hi; ++v)
          if (!iteration(f, v))
            return;
      } else {
        for (int64_t v = d.hi - 1; v >= d.lo; --v)
          if (!iteration(f, v))
            return;
      }
      return;
    }
    const auto &e = d.elems->elements();
    if (!f.reversed) {
      for (int64_t v : e)
        if (!iteration(f, v))
          return;
    } else {
      for (auto it = e.rbegin(); it != e.rend(); ++it)
        if (!iteration(f, *it))
          return;
    }
  }

  // One iteration with the loop variable `v`; false once the run stops.
  [[gnu::noinline]] bool iteration(const ir::ForStmt &f, int64_t v) {
    // Each iteration counts toward the step limit, so even an empty body cannot spin forever.
    if (rank_.cancelled() || !rank_.step(located(f.domain.range)))
      return false;
    slots_[f.slot].i = v; // an integer slot: its set part is never read
    return block(f.body);
  }

  [[gnu::noinline]] void call(const ir::CallStmt &c, const SourceRange &at) {
    if (!room(at))
      return;
    const ir::Function &f = program_.functions[c.callee];
    std::vector<RtValue> frame(f.slotNames.size());
    for (size_t i = 0; i < c.args.size(); ++i)
      frame[f.params[i].slot] = eval(c.args[i]);
    RankInterpreter(program_, f, rank_, frame).block(f.body); // (its own places, as compiled code's)
  }

  [[gnu::noinline]] void mesh(const ir::MeshStmt &m, SourceRange at) {
    std::vector<int64_t> sizes;
    std::vector<SourceRange> sizeAt;
    for (const ir::Expr &e : m.sizes) {
      sizes.push_back(evalInt(e));
      sizeAt.push_back(located(e.range));
    }
    rank_.declareMesh(at, schedule_.axes, sizes, sizeAt);
  }

  [[gnu::noinline]] SetPtr group(const ir::Group &g) {
    switch (g.kind) {
    case ir::Group::All: return rank_.allRanks();
    case ir::Group::Axis: return rank_.axisGroup(g.axis, located(g.range));
    case ir::Group::Ranks: {
      SetValue s = eval(g.ranks[0]).set;
      if (s.isRange && s.size() <= kMaxSetSize)
        return rank_.rangeGroup(s.lo, s.hi); // one set for every rank naming the range
      return shared(s, g.range);
    }
    }
    SCHEDC_UNREACHABLE("a group of no kind");
  }

  // An operation's (first) value; a storage read, the most common argument, without
  // building a Results.
  ValuePtr value(const ir::Operation &op) {
    if (op.kind == ir::OpKind::Read)
      return read(op.ref);
    return std::move(operation(op).values[0]);
  }
  ValuePtr read(const ir::StorageRef &r) { return rank_.read(r.array, indices(r), located(r.range)); }

  // A set argument's elements (`input({0, 1})`), out of line: few operations take one.
  [[gnu::noinline]] SetPtr setArgument(const ir::Expr &e) { return shared(eval(e).set, e.range); }

  // Runs an operation: its arguments in call order, then the sim backend's dispatch.
  sim::Results operation(const ir::Operation &op) {
    if (op.kind == ir::OpKind::Read)
      return sim::Results::one(read(op.ref));
    sim::Operands operands;
    std::span<const ParamInfo> params = opInfo(op.kind).params;
    for (size_t i = 0; i < params.size(); ++i) {
      sim::Operand &arg = operands.add();
      switch (params[i].kind) {
      case ParamKind::Int: arg.integer = evalLeafOrInt(op.exprAt(i)); break;
      case ParamKind::Set: arg.set = setArgument(op.exprAt(i)); break;
      case ParamKind::Value: arg.value = value(op.valueAt(i)); break;
      case ParamKind::Group: arg.group = group(op.group); break;
      }
    }
    return sim::execute(rank_, op.kind, located(op.range), operands);
  }

  // Where something at `r` is reported: there, or inside a table's row at the row.
  const SourceRange &located(const SourceRange &r) const { return rowAt_ ? *rowAt_ : r; }

  const ir::Program &program_;
  const ir::Function &schedule_;
  sim::Rank &rank_;
  uintptr_t stackLimit_;
  const SourceRange *rowAt_ = nullptr; // the row of a table being run (ir::TableStmt), if any
};

} // namespace

std::optional<std::vector<int64_t>> evaluateParameters(const ir::Function &schedule,
                                                       const std::map<std::string, int64_t> &overrides,
                                                       DiagnosticEngine &diags) {
  std::vector<RtValue> slots(schedule.slotNames.size());
  ParameterEvaluator eval(slots, diags);
  std::vector<int64_t> values;
  for (const ir::Param &p : schedule.params) {
    auto it = overrides.find(p.name);
    SCHEDC_ASSERT(it != overrides.end() || p.defaultValue, "a parameter with neither a default nor a value");
    int64_t v = it != overrides.end() ? it->second : eval.evalInt(*p.defaultValue);
    if (eval.failed)
      return std::nullopt;
    slots[p.slot] = RtValue{v, {}};
    values.push_back(v);
  }
  return values;
}

void runRank(const ir::Program &program, const ir::Function &schedule, const std::vector<int64_t> &params,
             sim::Rank &rank) {
  std::vector<RtValue> slots(schedule.slotNames.size());
  for (size_t i = 0; i < schedule.params.size(); ++i)
    slots[schedule.params[i].slot] = RtValue{params[i], {}};
  RankInterpreter(program, schedule, rank, slots).run();
}

} // namespace schedc::check
