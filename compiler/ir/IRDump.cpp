// IRDump — prints a Program for `schedc --emit=ir` and the sema lit tests: arrays with their
// kinds, then each function with its parameters, slots (`%name.N`) and statements, every
// statement annotated with its `line:col`.
#include "ir/IR.h"

#include <sstream>

namespace schedc::ir {

const char *typeName(Type t) {
  switch (t) {
  case Type::Int: return "int";
  case Type::Bool: return "bool";
  case Type::Set: return "set";
  case Type::Value: return "value";
  default: return valueKindName(*valueKind(t));
  }
}

bool isValueType(Type t) {
  return t >= Type::Weight;
}

std::optional<ValueKind> valueKind(Type t) {
  if (t < Type::Weight || t >= Type::Value)
    return std::nullopt;
  return static_cast<ValueKind>(static_cast<int>(t) - static_cast<int>(Type::Weight));
}

Type typeOf(SigType t) {
  switch (t) {
  case SigType::Int: return Type::Int;
  case SigType::Set: return Type::Set;
  case SigType::Value: return Type::Value;
  case SigType::Operand: break;
  default: return static_cast<Type>(static_cast<int>(Type::Weight) + static_cast<int>(*valueKindOf(t)));
  }
  SCHEDC_UNREACHABLE("the type of an operation's result that depends on its operand");
}

const char *exprOpName(ExprOp op) {
  switch (op) {
  case ExprOp::Int: return "int";
  case ExprOp::Bool: return "bool";
  case ExprOp::Var: return "var";
  case ExprOp::Rank: return "rank";
  case ExprOp::Ranks: return "ranks";
  case ExprOp::Layers: return "layers";
  case ExprOp::Batches: return "batches";
  case ExprOp::AxisCoord: return "coord";
  case ExprOp::AxisSize: return "axis_size";
  case ExprOp::Neg: return "-";
  case ExprOp::Not: return "!";
  case ExprOp::Add: return "+";
  case ExprOp::Sub: return "-";
  case ExprOp::Mul: return "*";
  case ExprOp::Div: return "/";
  case ExprOp::Mod: return "%";
  case ExprOp::Lt: return "<";
  case ExprOp::Le: return "<=";
  case ExprOp::Gt: return ">";
  case ExprOp::Ge: return ">=";
  case ExprOp::Eq: return "==";
  case ExprOp::Ne: return "!=";
  case ExprOp::And: return "&&";
  case ExprOp::Or: return "||";
  case ExprOp::Range: return "range";
  case ExprOp::SetLit: return "set";
  case ExprOp::In: return "in";
  case ExprOp::Min: return "min";
  case ExprOp::Max: return "max";
  case ExprOp::Size: return "size";
  case ExprOp::RankAt: return "rank_at";
  case ExprOp::Held: return "held";
  }
  SCHEDC_UNREACHABLE("an expression operator without a name");
}

namespace {

class Printer {
public:
  Printer(const Program &p, std::ostringstream &os) : p_(p), os_(os) {}

  void program() {
    os_ << "program";
    if (p_.entry)
      os_ << " entry=" << p_.functions[*p_.entry].name;
    os_ << "\n";
    for (const Array &a : p_.arrays)
      os_ << "array " << a.name << " : " << typeName(a.kind) << "\n";
    for (const Function &f : p_.functions)
      function(f);
  }

private:
  void function(const Function &f) {
    fn_ = &f;
    os_ << "\n" << (f.isSchedule ? "schedule " : "proc ") << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param &pr = f.params[i];
      os_ << (i ? ", " : "") << slot(pr.slot);
      if (pr.defaultValue)
        os_ << " = " << expr(*pr.defaultValue);
    }
    os_ << ")";
    if (f.targets.steps || f.targets.memory) {
      os_ << " target(";
      if (f.targets.steps)
        os_ << "steps=" << *f.targets.steps << (f.targets.memory ? ", " : "");
      if (f.targets.memory)
        os_ << "memory=" << *f.targets.memory;
      os_ << ")";
    }
    os_ << " {\n";
    block(f.body, 1);
    os_ << "}\n";
  }

  std::string slot(uint32_t s) const { return "%" + fn_->slotNames[s] + "." + std::to_string(s); }

  std::string expr(const Expr &e) const {
    switch (e.op) {
    case ExprOp::Int: return std::to_string(e.value);
    case ExprOp::Bool: return e.value ? "true" : "false";
    case ExprOp::Var: return slot(static_cast<uint32_t>(e.value));
    case ExprOp::Rank:
    case ExprOp::Ranks:
    case ExprOp::Layers:
    case ExprOp::Batches: return exprOpName(e.op);
    case ExprOp::AxisCoord: return "coord(" + fn_->axes[e.value] + ")";
    case ExprOp::AxisSize: return "size(" + fn_->axes[e.value] + ")";
    case ExprOp::Held: {
      std::string s = "held(" + p_.arrays[e.value].name + "[";
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? ", " : "") + expr(e.operands[i]);
      return s + "])";
    }
    case ExprOp::RankAt: {
      std::string s = "rank_at(";
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? ", " : "") + fn_->axes[i] + " = " + expr(e.operands[i]);
      return s + ")";
    }
    case ExprOp::Neg:
    case ExprOp::Not: return std::string(exprOpName(e.op)) + expr(e.operands[0]);
    case ExprOp::Range: return "range(" + expr(e.operands[0]) + ", " + expr(e.operands[1]) + ")";
    case ExprOp::SetLit:
    case ExprOp::Min:
    case ExprOp::Max:
    case ExprOp::Size: {
      std::string s = e.op == ExprOp::SetLit ? "{" : std::string(exprOpName(e.op)) + "(";
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? ", " : "") + expr(e.operands[i]);
      return s + (e.op == ExprOp::SetLit ? "}" : ")");
    }
    default: return "(" + expr(e.operands[0]) + " " + exprOpName(e.op) + " " + expr(e.operands[1]) + ")";
    }
  }

  std::string ref(const StorageRef &r) const {
    std::string s = p_.arrays[r.array].name + "[";
    for (size_t i = 0; i < r.indices.size(); ++i)
      s += (i ? ", " : "") + expr(r.indices[i]);
    return s + "]";
  }

  std::string group(const Group &g) const {
    switch (g.kind) {
    case Group::All: return "all";
    case Group::Axis: return "axis " + fn_->axes[g.axis];
    case Group::Ranks: return expr(g.ranks[0]);
    }
    SCHEDC_UNREACHABLE("a group of no kind");
  }

  std::string op(const Operation &o) const {
    if (o.kind == OpKind::Read)
      return ref(o.ref);
    std::string s = std::string(opName(o.kind)) + "(";
    std::span<const ParamInfo> params = opInfo(o.kind).params;
    for (size_t i = 0; i < params.size(); ++i) {
      s += i ? ", " : "";
      switch (params[i].kind) {
      case ParamKind::Int:
      case ParamKind::Set: s += expr(o.exprAt(i)); break;
      case ParamKind::Value: s += op(o.valueAt(i)); break;
      case ParamKind::Group: s += "group=" + group(o.group); break;
      }
    }
    s += ")";
    if (o.results.size() == 1)
      s += std::string(" : ") + typeName(o.results[0]);
    return s;
  }

  void block(const Block &b, int depth) {
    for (const Stmt &s : b)
      stmt(s, depth);
  }

  std::ostream &start(const Stmt &s, int depth) {
    for (int i = 0; i < depth; ++i)
      os_ << "  ";
    return os_;
  }

  std::string loc(const Stmt &s) const {
    return "  ; " + std::to_string(s.range.begin.line) + ":" + std::to_string(s.range.begin.col) + "\n";
  }

  // A table: its shapes (where an earlier table sharing them has not shown them), then a line
  // a row (its shape, its hole values, and its range: the cell's, in the file's line:col).
  void table(const TableStmt &t, const Stmt &s, int d) {
    start(s, d) << "table of " << t.rows.size() << " rows, holes (";
    for (size_t i = 0; i < t.holes.size(); ++i)
      os_ << (i ? ", " : "") << slot(t.holes[i]);
    os_ << ")" << loc(s);
    bool shown = shapesShown_ == t.shapes.get();
    shapesShown_ = t.shapes.get();
    for (size_t k = 0; k < t.shapes->size() && !shown; ++k) {
      start(s, d + 1) << "shape " << k << " {\n";
      block((*t.shapes)[k].body, d + 2);
      start(s, d + 1) << "}\n";
    }
    for (const TableStmt::Row &row : t.rows) {
      start(s, d + 1) << "row shape " << row.shape << " (";
      for (uint32_t i = 0; i < (*t.shapes)[row.shape].holes; ++i)
        os_ << (i ? ", " : "") << t.values[row.firstValue + i];
      os_ << ")  ; " << row.at.begin.line << ":" << row.at.begin.col << "\n";
    }
  }

  void stmt(const Stmt &s, int d) {
    if (auto *x = std::get_if<LetStmt>(&s.node)) {
      start(s, d) << "let " << slot(x->slot) << " : " << typeName(x->value.type) << " = " << expr(x->value) << loc(s);
    } else if (auto *x = std::get_if<StoreStmt>(&s.node)) {
      start(s, d);
      for (size_t i = 0; i < x->targets.size(); ++i)
        os_ << (i ? ", " : "") << ref(x->targets[i]);
      os_ << (x->targets.empty() ? x->op.results.empty() ? "" : "drop " : " = ") << op(x->op) << loc(s);
    } else if (auto *x = std::get_if<FreeStmt>(&s.node)) {
      start(s, d) << "free ";
      for (size_t i = 0; i < x->refs.size(); ++i)
        os_ << (i ? ", " : "") << ref(x->refs[i]);
      os_ << loc(s);
    } else if (auto *x = std::get_if<IfStmt>(&s.node)) {
      start(s, d) << "if " << expr(x->cond) << " {" << loc(s);
      block(x->then, d + 1);
      if (!x->otherwise.empty()) {
        start(s, d) << "} else {\n";
        block(x->otherwise, d + 1);
      }
      start(s, d) << "}\n";
    } else if (auto *x = std::get_if<ForStmt>(&s.node)) {
      start(s, d) << "for " << slot(x->slot) << " in " << (x->reversed ? "reversed " : "") << expr(x->domain) << " {"
                  << loc(s);
      block(x->body, d + 1);
      start(s, d) << "}\n";
    } else if (auto *x = std::get_if<TableStmt>(&s.node)) {
      table(*x, s, d);
    } else if (auto *x = std::get_if<GroupStmt>(&s.node)) {
      start(s, d) << "group {" << loc(s);
      block(x->body, d + 1);
      start(s, d) << "}\n";
    } else if (auto *x = std::get_if<OverlapStmt>(&s.node)) {
      start(s, d) << "overlap {" << loc(s);
      block(x->first, d + 1);
      start(s, d) << "} with {\n";
      block(x->second, d + 1);
      start(s, d) << "}\n";
    } else if (auto *x = std::get_if<CallStmt>(&s.node)) {
      start(s, d) << "call " << p_.functions[x->callee].name << "(";
      for (size_t i = 0; i < x->args.size(); ++i)
        os_ << (i ? ", " : "") << expr(x->args[i]);
      os_ << ")" << loc(s);
    } else if (auto *x = std::get_if<MeshStmt>(&s.node)) {
      start(s, d) << "mesh (";
      for (size_t i = 0; i < x->sizes.size(); ++i)
        os_ << (i ? ", " : "") << fn_->axes[i] << " = " << expr(x->sizes[i]);
      os_ << ")" << loc(s);
    } else if (auto *x = std::get_if<RequireStmt>(&s.node)) {
      std::string quoted; // as the source spells it
      for (char c : x->message)
        quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
      start(s, d) << "require" << (x->sameOnEveryRank ? " (every rank) " : " ") << expr(x->cond) << ", \"" << quoted
                  << "\"" << loc(s);
    }
  }

  const Program &p_;
  std::ostringstream &os_;
  const Function *fn_ = nullptr;
  const void *shapesShown_ = nullptr; // the shapes the last table showed
};

} // namespace

std::string dump(const Program &p, const SourceManager &) {
  std::ostringstream os;
  Printer(p, os).program();
  return os.str();
}

} // namespace schedc::ir
