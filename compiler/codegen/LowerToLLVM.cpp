// LowerToLLVM implementation. Every statement starts with `schedc_step` (the step limit and
// cancellation: on 0 the function returns through its exit block), and so does every loop
// iteration. Integers are i64 with inline overflow checks whose slow path, like `/` and `%`,
// calls `schedc_arith` (the runtime's, and the interpreter's, arithmetic). Sets are runtime
// handles: an expression yields a new reference (released after use) or borrows a slot's;
// set slots own one reference each, released when overwritten and at the function's exit.
// Operands are evaluated in the interpreter's order, so both report the same first error.
#include "codegen/LowerToLLVM.h"

#include "codegen/CallGraph.h"
#include "codegen/ProgramDescription.h"
#include "codegen/RuntimeFunctions.h"
#include "codegen/SlotTypes.h"
#include "schedc/runtime.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace schedc::codegen {

namespace {

using llvm::BasicBlock;
using llvm::Value;

struct Shared {
  llvm::Module &module;
  const ir::Program &program;
  const RuntimeFunctions &rt;
  Locations &locations;
  std::map<uint32_t, llvm::Function *> functions; // ir function id -> LLVM function
};

// A set-valued expression: a handle, owned (release it) or borrowed from a slot.
struct SetVal {
  Value *handle;
  bool owned;
};

class FunctionLowering {
public:
  FunctionLowering(Shared &s, const ir::Function &f, llvm::Function *fn)
      : s_(s), f_(f), fn_(fn), b_(fn->getContext()), i32_(b_.getInt32Ty()), i64_(b_.getInt64Ty()),
        operand_(llvm::StructType::get(fn->getContext(), {i64_, i32_, i32_})) {}

  // Lowers a schedule (params from an array) or a procedure (params as arguments).
  void lower() {
    begin();
    Value *rank = fn_->getArg(0);
    rank_ = rank;
    for (size_t i = 0; i < f_.params.size(); ++i) {
      Value *v = f_.isSchedule ? b_.CreateLoad(i64_, b_.CreateConstGEP1_64(i64_, fn_->getArg(1), i))
                               : static_cast<Value *>(fn_->getArg(static_cast<unsigned>(i + 1)));
      b_.CreateStore(v, slots_[f_.params[i].slot]);
    }
    block(f_.body);
    finish();
  }

  // Lowers the parameter defaults: values[i] = default unless overridden[i].
  void lowerParameters() {
    begin();
    rank_ = fn_->getArg(0);
    Value *values = fn_->getArg(1), *overridden = fn_->getArg(2);
    for (size_t i = 0; i < f_.params.size(); ++i) {
      const ir::Param &p = f_.params[i];
      Value *slotPtr = b_.CreateConstGEP1_64(i64_, values, i);
      if (p.defaultValue) {
        Value *given = b_.CreateLoad(b_.getInt8Ty(), b_.CreateConstGEP1_64(b_.getInt8Ty(), overridden, i));
        BasicBlock *compute = newBlock("default"), *next = newBlock("param.next");
        b_.CreateCondBr(b_.CreateICmpEQ(given, b_.getInt8(0)), compute, next);
        b_.SetInsertPoint(compute);
        b_.CreateStore(integer(*p.defaultValue), slotPtr);
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      }
      b_.CreateStore(b_.CreateLoad(i64_, slotPtr), slots_[p.slot]);
    }
    finish();
  }

private:
  // ---- Frame ---------------------------------------------------------------------------------

  void begin() {
    BasicBlock *entry = BasicBlock::Create(fn_->getContext(), "entry", fn_);
    entry_ = entry;
    exit_ = BasicBlock::Create(fn_->getContext(), "exit", fn_);
    b_.SetInsertPoint(entry);
    slotTypes_ = slotTypes(f_);
    for (size_t i = 0; i < f_.slotNames.size(); ++i) {
      slots_.push_back(b_.CreateAlloca(i64_, nullptr, f_.slotNames[i]));
      b_.CreateStore(b_.getInt64(0), slots_.back());
    }
  }

  // Falls through to the exit block, which releases the sets held in slots and returns.
  void finish() {
    if (!b_.GetInsertBlock()->getTerminator())
      b_.CreateBr(exit_);
    b_.SetInsertPoint(exit_);
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slotTypes_[i] == ir::Type::Set)
        b_.CreateCall(s_.rt("schedc_set_release"), {rank_, b_.CreateLoad(i64_, slots_[i])});
    b_.CreateRetVoid();
  }

  BasicBlock *newBlock(const char *name) { return BasicBlock::Create(fn_->getContext(), name, fn_); }
  // A location's id; inside a table's row, every location is the row's (ir::TableStmt).
  llvm::ConstantInt *loc(const SourceRange &r) { return b_.getInt32(s_.locations.id(rowAt_ ? *rowAt_ : r)); }

  // Before a statement or an iteration: stop (return) when the runtime says so.
  void step(const SourceRange &at) {
    Value *go = b_.CreateCall(s_.rt("schedc_step"), {rank_, loc(at)});
    BasicBlock *next = newBlock("go");
    b_.CreateCondBr(b_.CreateICmpNE(go, b_.getInt32(0)), next, exit_);
    b_.SetInsertPoint(next);
  }

  // ---- Statements ----------------------------------------------------------------------------

  void block(const ir::Block &blk) {
    for (const ir::Stmt &s : blk) {
      step(s.range);
      statement(s);
    }
  }

  void statement(const ir::Stmt &s) {
    if (auto *x = std::get_if<ir::LetStmt>(&s.node)) {
      if (x->value.type == ir::Type::Set) {
        SetVal v = set(x->value);
        if (!v.owned)
          b_.CreateCall(s_.rt("schedc_set_retain"), {rank_, v.handle});
        b_.CreateCall(s_.rt("schedc_set_release"), {rank_, b_.CreateLoad(i64_, slots_[x->slot])});
        b_.CreateStore(v.handle, slots_[x->slot]);
      } else {
        b_.CreateStore(integer(x->value), slots_[x->slot]);
      }
    } else if (auto *x = std::get_if<ir::StoreStmt>(&s.node)) {
      std::vector<Value *> results = operation(x->op);
      for (size_t i = 0; i < x->targets.size(); ++i) {
        const ir::StorageRef &t = x->targets[i];
        auto [index, n] = int64Array(t.indices);
        b_.CreateCall(s_.rt("schedc_store"), {rank_, loc(t.range), b_.getInt32(t.array), index, n, results[i]});
      }
    } else if (auto *x = std::get_if<ir::FreeStmt>(&s.node)) {
      for (const ir::StorageRef &r : x->refs) {
        auto [index, n] = int64Array(r.indices);
        b_.CreateCall(s_.rt("schedc_free"), {rank_, loc(r.range), b_.getInt32(r.array), index, n});
      }
    } else if (auto *x = std::get_if<ir::IfStmt>(&s.node)) {
      Value *cond = b_.CreateICmpNE(integer(x->cond), b_.getInt64(0));
      BasicBlock *then = newBlock("then"), *otherwise = newBlock("else"), *join = newBlock("endif");
      b_.CreateCondBr(cond, then, otherwise);
      b_.SetInsertPoint(then);
      block(x->then);
      b_.CreateBr(join);
      b_.SetInsertPoint(otherwise);
      block(x->otherwise);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
    } else if (auto *x = std::get_if<ir::ForStmt>(&s.node)) {
      loop(*x);
    } else if (auto *x = std::get_if<ir::CallStmt>(&s.node)) {
      std::vector<Value *> args{rank_};
      for (const ir::Expr &a : x->args)
        args.push_back(integer(a));
      b_.CreateCall(s_.functions.at(x->callee), args);
    } else if (auto *x = std::get_if<ir::MeshStmt>(&s.node)) {
      auto n = static_cast<uint32_t>(x->sizes.size());
      Value *sizes = scratch(i64_, n);
      Value *locs = scratch(i32_, n);
      for (uint32_t i = 0; i < n; ++i) {
        b_.CreateStore(integer(x->sizes[i]), b_.CreateConstGEP1_32(i64_, sizes, i));
        b_.CreateStore(loc(x->sizes[i].range), b_.CreateConstGEP1_32(i32_, locs, i));
      }
      b_.CreateCall(s_.rt("schedc_mesh"), {rank_, loc(s.range), sizes, locs, b_.getInt32(n)});
    } else if (auto *x = std::get_if<ir::TableStmt>(&s.node)) {
      table(*x);
    } else if (auto *x = std::get_if<ir::GroupStmt>(&s.node)) {
      b_.CreateCall(s_.rt("schedc_group"), {rank_, loc(s.range), b_.getInt32(0)});
      block(x->body);
      b_.CreateCall(s_.rt("schedc_group"), {rank_, loc(s.range), b_.getInt32(1)});
    } else if (auto *x = std::get_if<ir::OverlapStmt>(&s.node)) {
      // A cancelled run leaves at the next schedc_step; the pair is never closed then.
      b_.CreateCall(s_.rt("schedc_overlap"), {rank_, loc(s.range), b_.getInt32(0)});
      block(x->first);
      b_.CreateCall(s_.rt("schedc_overlap"), {rank_, loc(s.range), b_.getInt32(1)});
      block(x->second);
      b_.CreateCall(s_.rt("schedc_overlap"), {rank_, loc(s.range), b_.getInt32(2)});
    } else if (auto *x = std::get_if<ir::RequireStmt>(&s.node)) {
      b_.CreateCall(s_.rt("schedc_require"),
                    {rank_, loc(s.range), integer(x->cond), b_.getInt32(x->sameOnEveryRank ? 1 : 0),
                     b_.CreateGlobalString(x->message, "require")});
    }
  }

  // Each row of a table: its hole slots set, then its shape's statements at its range.
  void table(const ir::TableStmt &t) {
    const SourceRange *outer = rowAt_;
    for (const ir::TableStmt::Row &row : t.rows) {
      const ir::TableStmt::Shape &shape = (*t.shapes)[row.shape];
      for (uint32_t i = 0; i < shape.holes; ++i)
        b_.CreateStore(b_.getInt64(t.values[row.firstValue + i]), slots_[t.holes[i]]);
      rowAt_ = &row.at;
      block(shape.body);
    }
    rowAt_ = outer;
  }

  // `for v in domain`: a range is counted natively; any other set by index. Every
  // iteration first calls schedc_step (at the domain's location).
  void loop(const ir::ForStmt &f) {
    Value *lo, *hi, *setHandle = nullptr;
    std::optional<SetVal> domain;
    if (f.domain.op == ir::ExprOp::Range) {
      lo = integer(f.domain.operands[0]);
      hi = integer(f.domain.operands[1]);
    } else {
      domain = set(f.domain);
      setHandle = domain->handle;
      lo = b_.getInt64(0);
      hi = b_.CreateCall(s_.rt("schedc_set_size"), {rank_, setHandle});
    }
    BasicBlock *pre = b_.GetInsertBlock();
    BasicBlock *head = newBlock("for.head"), *body = newBlock("for.body"), *done = newBlock("for.end");
    // Counting up: i = lo .. hi-1; down: i = hi-1 .. lo.
    Value *first = f.reversed ? b_.CreateSub(hi, b_.getInt64(1)) : lo;
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *i = b_.CreatePHI(i64_, 2, "i");
    i->addIncoming(first, pre);
    Value *more = f.reversed ? b_.CreateICmpSGE(i, lo) : b_.CreateICmpSLT(i, hi);
    b_.CreateCondBr(more, body, done);
    b_.SetInsertPoint(body);
    step(f.domain.range);
    Value *v = setHandle ? static_cast<Value *>(b_.CreateCall(s_.rt("schedc_set_at"), {rank_, setHandle, i})) : i;
    b_.CreateStore(v, slots_[f.slot]);
    block(f.body);
    Value *next = f.reversed ? b_.CreateSub(i, b_.getInt64(1)) : b_.CreateAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(done);
    if (domain)
      release(*domain);
  }

  // `n` elements of `type` on the stack, allocated once in the entry block (an alloca in a
  // loop body would take new stack on every iteration).
  Value *scratch(llvm::Type *type, uint32_t n) {
    llvm::IRBuilder<> at(entry_, entry_->begin());
    return at.CreateAlloca(type, b_.getInt32(std::max<uint32_t>(n, 1)));
  }

  // The integers `values` in a stack array and their count, for runtime calls that take both.
  std::pair<Value *, Value *> int64Array(const std::vector<ir::Expr> &values) {
    auto n = static_cast<uint32_t>(values.size());
    Value *array = scratch(i64_, n);
    for (uint32_t k = 0; k < n; ++k)
      b_.CreateStore(integer(values[k]), b_.CreateConstGEP1_32(i64_, array, k));
    return {array, b_.getInt32(n)};
  }

  // ---- Operations ----------------------------------------------------------------------------

  Value *value(const ir::Operation &op) { return operation(op)[0]; }

  // An operation: a storage read, or one call of schedc_operation with its arguments in call
  // order (evaluated in that order, as the interpreter does) and room for its results.
  std::vector<Value *> operation(const ir::Operation &op) {
    if (op.kind == ir::OpKind::Read) {
      auto [index, n] = int64Array(op.ref.indices);
      return {b_.CreateCall(s_.rt("schedc_read"), {rank_, loc(op.ref.range), b_.getInt32(op.ref.array), index, n})};
    }
    const OpInfo &info = opInfo(op.kind);
    auto count = static_cast<uint32_t>(info.params.size());
    Value *args = scratch(operand_, count);
    std::vector<SetVal> owned;
    for (uint32_t i = 0; i < count; ++i) {
      auto [value, group, at] = argument(op, i, owned);
      Value *slot = b_.CreateConstGEP1_32(operand_, args, i);
      b_.CreateStore(value, b_.CreateStructGEP(operand_, slot, 0));
      b_.CreateStore(b_.getInt32(group), b_.CreateStructGEP(operand_, slot, 1));
      b_.CreateStore(loc(at), b_.CreateStructGEP(operand_, slot, 2));
    }
    Value *results = scratch(i64_, static_cast<uint32_t>(kMaxResults));
    b_.CreateCall(s_.rt("schedc_operation"),
                  {rank_, loc(op.range), b_.getInt32(static_cast<int32_t>(op.kind)), args, results});
    for (const SetVal &v : owned)
      release(v);
    std::vector<Value *> out;
    for (uint32_t i = 0; i < info.results.size(); ++i)
      out.push_back(b_.CreateLoad(i64_, b_.CreateConstGEP1_32(i64_, results, i)));
    return out;
  }

  struct Argument {
    Value *value;
    int32_t group; // an enum schedc_group_kind, for a Group parameter
    SourceRange at;
  };
  // Argument `i` of `op` as a schedc_operand's fields; sets it makes are added to `owned`.
  Argument argument(const ir::Operation &op, uint32_t i, std::vector<SetVal> &owned) {
    switch (opInfo(op.kind).params[i].kind) {
    case ParamKind::Int: return {integer(op.exprAt(i)), SCHEDC_GROUP_ALL, op.exprAt(i).range};
    case ParamKind::Set: {
      owned.push_back(set(op.exprAt(i)));
      return {owned.back().handle, SCHEDC_GROUP_ALL, op.exprAt(i).range};
    }
    case ParamKind::Value: return {value(op.valueAt(i)), SCHEDC_GROUP_ALL, op.valueAt(i).range};
    case ParamKind::Group: break;
    }
    const ir::Group &g = op.group;
    switch (g.kind) {
    case ir::Group::All: return {b_.getInt64(0), SCHEDC_GROUP_ALL, g.range};
    case ir::Group::Axis: return {b_.getInt64(g.axis), SCHEDC_GROUP_AXIS, g.range};
    case ir::Group::Ranks: owned.push_back(set(g.ranks[0])); return {owned.back().handle, SCHEDC_GROUP_RANKS, g.range};
    }
    SCHEDC_UNREACHABLE("a group of no kind");
  }

  // ---- Expressions ---------------------------------------------------------------------------

  void release(const SetVal &v) {
    if (v.owned)
      b_.CreateCall(s_.rt("schedc_set_release"), {rank_, v.handle});
  }

  Value *boolean(Value *i1) { return b_.CreateZExt(i1, i64_); }

  // a op b with an overflow check whose slow path is the runtime's arithmetic.
  Value *checkedArith(llvm::Intrinsic::ID id, char op, Value *a, Value *b, const SourceRange &at) {
    Value *pair = b_.CreateBinaryIntrinsic(id, a, b);
    Value *result = b_.CreateExtractValue(pair, 0);
    Value *overflow = b_.CreateExtractValue(pair, 1);
    BasicBlock *here = b_.GetInsertBlock(), *slow = newBlock("overflow"), *join = newBlock("arith");
    b_.CreateCondBr(overflow, slow, join);
    b_.SetInsertPoint(slow);
    Value *reported = b_.CreateCall(s_.rt("schedc_arith"), {rank_, loc(at), b_.getInt32(op), a, b});
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode *phi = b_.CreatePHI(i64_, 2);
    phi->addIncoming(result, here);
    phi->addIncoming(reported, slow);
    return phi;
  }

  // An integer or boolean expression (booleans are 0 or 1).
  Value *integer(const ir::Expr &e) {
    switch (e.op) {
    case ir::ExprOp::Int:
    case ir::ExprOp::Bool: return b_.getInt64(static_cast<uint64_t>(e.value));
    case ir::ExprOp::Var: return b_.CreateLoad(i64_, slots_[static_cast<size_t>(e.value)]);
    case ir::ExprOp::Rank: return b_.CreateCall(s_.rt("schedc_rank_id"), {rank_});
    case ir::ExprOp::Ranks: return b_.CreateCall(s_.rt("schedc_model"), {rank_, b_.getInt32(SCHEDC_MODEL_RANKS)});
    case ir::ExprOp::Layers: return b_.CreateCall(s_.rt("schedc_model"), {rank_, b_.getInt32(SCHEDC_MODEL_LAYERS)});
    case ir::ExprOp::Batches: return b_.CreateCall(s_.rt("schedc_model"), {rank_, b_.getInt32(SCHEDC_MODEL_BATCHES)});
    case ir::ExprOp::AxisCoord:
      return b_.CreateCall(s_.rt("schedc_axis_coord"), {rank_, loc(e.range), b_.getInt32(e.value)});
    case ir::ExprOp::AxisSize:
      return b_.CreateCall(s_.rt("schedc_axis_size"), {rank_, loc(e.range), b_.getInt32(e.value)});
    case ir::ExprOp::Held: {
      auto [index, n] = int64Array(e.operands);
      Value *held = b_.CreateCall(s_.rt("schedc_held"), {rank_, b_.getInt32(static_cast<uint32_t>(e.value)), index, n});
      return b_.CreateZExt(held, i64_);
    }
    case ir::ExprOp::RankAt: {
      auto [coords, n] = int64Array(e.operands);
      return b_.CreateCall(s_.rt("schedc_rank_at"), {rank_, loc(e.range), n, coords});
    }
    case ir::ExprOp::Neg:
    case ir::ExprOp::Add:
    case ir::ExprOp::Sub:
    case ir::ExprOp::Mul:
    case ir::ExprOp::Div:
    case ir::ExprOp::Mod: return arithmetic(e);
    case ir::ExprOp::Lt:
    case ir::ExprOp::Le:
    case ir::ExprOp::Gt:
    case ir::ExprOp::Ge:
    case ir::ExprOp::Eq:
    case ir::ExprOp::Ne: return comparison(e);
    case ir::ExprOp::Not: return boolean(b_.CreateICmpEQ(integer(e.operands[0]), b_.getInt64(0)));
    case ir::ExprOp::And:
    case ir::ExprOp::Or: return shortCircuit(e);
    case ir::ExprOp::In: return membership(e);
    case ir::ExprOp::Min:
    case ir::ExprOp::Max: return extremum(e);
    case ir::ExprOp::Size: return sizeOf(e.operands[0]);
    case ir::ExprOp::Range:
    case ir::ExprOp::SetLit: break; // sets: see set()
    }
    SCHEDC_UNREACHABLE("a set where an integer was expected");
  }

  // -a, a + b, a - b, a * b (overflow checked inline), a / b and a % b (by the runtime, which
  // also reports a zero divisor).
  Value *arithmetic(const ir::Expr &e) {
    if (e.op == ir::ExprOp::Neg)
      return checkedArith(llvm::Intrinsic::ssub_with_overflow, '-', b_.getInt64(0), integer(e.operands[0]), e.range);
    Value *a = integer(e.operands[0]);
    Value *b = integer(e.operands[1]);
    if (e.op == ir::ExprOp::Add)
      return checkedArith(llvm::Intrinsic::sadd_with_overflow, '+', a, b, e.range);
    if (e.op == ir::ExprOp::Sub)
      return checkedArith(llvm::Intrinsic::ssub_with_overflow, '-', a, b, e.range);
    if (e.op == ir::ExprOp::Mul)
      return checkedArith(llvm::Intrinsic::smul_with_overflow, '*', a, b, e.range);
    char op = e.op == ir::ExprOp::Div ? '/' : '%';
    return b_.CreateCall(s_.rt("schedc_arith"), {rank_, loc(e.range), b_.getInt32(op), a, b});
  }

  // <, <=, >, >= of integers; == and != of integers or sets.
  Value *comparison(const ir::Expr &e) {
    if (e.op != ir::ExprOp::Eq && e.op != ir::ExprOp::Ne) {
      Value *a = integer(e.operands[0]);
      Value *b = integer(e.operands[1]);
      auto pred = e.op == ir::ExprOp::Lt   ? llvm::CmpInst::ICMP_SLT
                  : e.op == ir::ExprOp::Le ? llvm::CmpInst::ICMP_SLE
                  : e.op == ir::ExprOp::Gt ? llvm::CmpInst::ICMP_SGT
                                           : llvm::CmpInst::ICMP_SGE;
      return boolean(b_.CreateICmp(pred, a, b));
    }
    Value *eq;
    if (e.operands[0].type == ir::Type::Set) {
      SetVal a = set(e.operands[0]);
      SetVal b = set(e.operands[1]);
      eq = b_.CreateICmpNE(b_.CreateCall(s_.rt("schedc_set_equal"), {rank_, loc(e.range), a.handle, b.handle}),
                           b_.getInt32(0));
      release(a);
      release(b);
    } else {
      Value *a = integer(e.operands[0]);
      Value *b = integer(e.operands[1]);
      eq = b_.CreateICmpEQ(a, b);
    }
    return boolean(e.op == ir::ExprOp::Eq ? eq : b_.CreateNot(eq));
  }

  // `and` and `or`, short-circuit as the interpreter evaluates them.
  Value *shortCircuit(const ir::Expr &e) {
    bool isAnd = e.op == ir::ExprOp::And;
    Value *lhs = b_.CreateICmpNE(integer(e.operands[0]), b_.getInt64(0));
    BasicBlock *here = b_.GetInsertBlock(), *rhsBlock = newBlock("rhs"), *join = newBlock("logic");
    if (isAnd)
      b_.CreateCondBr(lhs, rhsBlock, join);
    else
      b_.CreateCondBr(lhs, join, rhsBlock);
    b_.SetInsertPoint(rhsBlock);
    Value *rhs = b_.CreateICmpNE(integer(e.operands[1]), b_.getInt64(0));
    BasicBlock *rhsEnd = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode *phi = b_.CreatePHI(b_.getInt1Ty(), 2);
    phi->addIncoming(b_.getInt1(!isAnd), here);
    phi->addIncoming(rhs, rhsEnd);
    return boolean(phi);
  }

  // `v in s`: the set first, then the element (a range is two comparisons).
  Value *membership(const ir::Expr &e) {
    if (e.operands[1].op == ir::ExprOp::Range) {
      Value *lo = integer(e.operands[1].operands[0]);
      Value *hi = integer(e.operands[1].operands[1]);
      Value *v = integer(e.operands[0]);
      return boolean(b_.CreateAnd(b_.CreateICmpSGE(v, lo), b_.CreateICmpSLT(v, hi)));
    }
    SetVal s = set(e.operands[1]);
    Value *v = integer(e.operands[0]);
    Value *in = b_.CreateICmpNE(b_.CreateCall(s_.rt("schedc_set_contains"), {rank_, s.handle, v}), b_.getInt32(0));
    release(s);
    return boolean(in);
  }

  // min(...) and max(...), left to right.
  Value *extremum(const ir::Expr &e) {
    Value *best = integer(e.operands[0]);
    for (size_t i = 1; i < e.operands.size(); ++i) {
      Value *v = integer(e.operands[i]);
      Value *better = e.op == ir::ExprOp::Min ? b_.CreateICmpSLT(v, best) : b_.CreateICmpSGT(v, best);
      best = b_.CreateSelect(better, v, best);
    }
    return best;
  }

  // size(s): a range's length (0 if empty) without building it.
  Value *sizeOf(const ir::Expr &s) {
    if (s.op == ir::ExprOp::Range) {
      Value *lo = integer(s.operands[0]);
      Value *hi = integer(s.operands[1]);
      Value *n = b_.CreateSub(hi, lo);
      return b_.CreateSelect(b_.CreateICmpSGT(n, b_.getInt64(0)), n, b_.getInt64(0));
    }
    SetVal v = set(s);
    Value *n = b_.CreateCall(s_.rt("schedc_set_size"), {rank_, v.handle});
    release(v);
    return n;
  }

  // A set expression.
  SetVal set(const ir::Expr &e) {
    switch (e.op) {
    case ir::ExprOp::Var: return {b_.CreateLoad(i64_, slots_[static_cast<size_t>(e.value)]), false};
    case ir::ExprOp::Range: {
      Value *lo = integer(e.operands[0]);
      Value *hi = integer(e.operands[1]);
      return {b_.CreateCall(s_.rt("schedc_set_range"), {rank_, lo, hi}), true};
    }
    case ir::ExprOp::SetLit: {
      Value *s = b_.CreateCall(s_.rt("schedc_set_new"), {rank_});
      for (const ir::Expr &o : e.operands) {
        if (o.type == ir::Type::Int) {
          b_.CreateCall(s_.rt("schedc_set_add"), {rank_, loc(o.range), s, integer(o)});
        } else {
          SetVal t = set(o);
          b_.CreateCall(s_.rt("schedc_set_add_set"), {rank_, loc(o.range), s, t.handle});
          release(t);
        }
      }
      return {s, true};
    }
    default: break;
    }
    SCHEDC_UNREACHABLE("an integer where a set was expected");
  }

  Shared &s_;
  const ir::Function &f_;
  llvm::Function *fn_;
  llvm::IRBuilder<> b_;
  llvm::Type *i32_, *i64_;
  Value *rank_ = nullptr;
  BasicBlock *exit_ = nullptr;
  std::vector<llvm::AllocaInst *> slots_;
  BasicBlock *entry_ = nullptr;
  std::vector<ir::Type> slotTypes_;
  llvm::StructType *operand_;          // schedc_operand: {i64 value, i32 group, u32 loc}
  const SourceRange *rowAt_ = nullptr; // inside a table's row: its range, every location's
};

} // namespace

std::unique_ptr<llvm::Module> lowerToLLVM(llvm::LLVMContext &context, const ir::Program &program,
                                          const ir::Function &entry, const SourceManager &sources) {
  auto module = std::make_unique<llvm::Module>(entry.name, context);
  RuntimeFunctions rt(*module);
  Locations locations;
  Shared shared{*module, program, rt, locations, {}};
  auto *ptr = llvm::PointerType::getUnqual(context);
  auto *voidTy = llvm::Type::getVoidTy(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  uint32_t entryId = static_cast<uint32_t>(&entry - program.functions.data());

  // Declare first (procedures may be called before they are lowered), then lower.
  std::vector<uint32_t> ids = reachableFunctions(program, entryId);
  for (uint32_t id : ids) {
    const ir::Function &f = program.functions[id];
    std::vector<llvm::Type *> args{ptr};
    if (f.isSchedule)
      args.push_back(ptr);
    else
      args.insert(args.end(), f.params.size(), i64);
    auto *fn = llvm::Function::Create(llvm::FunctionType::get(voidTy, args, false), llvm::Function::InternalLinkage,
                                      (f.isSchedule ? "schedule." : "proc.") + f.name, *module);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (!f.isSchedule && keepOutOfLine(f.callHeight))
      fn->addFnAttr(llvm::Attribute::NoInline);
    shared.functions[id] = fn;
  }
  for (uint32_t id : ids)
    FunctionLowering(shared, program.functions[id], shared.functions[id]).lower();

  auto *paramsFn = llvm::Function::Create(llvm::FunctionType::get(voidTy, {ptr, ptr, ptr}, false),
                                          llvm::Function::InternalLinkage, "parameters." + entry.name, *module);
  paramsFn->addFnAttr(llvm::Attribute::NoUnwind);
  FunctionLowering(shared, entry, paramsFn).lowerParameters();

  emitProgramDescription(*module, program, entry, sources, locations, paramsFn, shared.functions[entryId]);
  return module;
}

} // namespace schedc::codegen
