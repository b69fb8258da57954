// FunctionLowering (FunctionLowering.h): the function as a whole — its scopes of names, its
// parameters and defaults, a schedule's attributes — and lowerFunction, sema's entry to it.
#include "sema/FunctionLowering.h"

#include <algorithm>

namespace schedc::sema {

void FunctionLowering::run() {
  out_.name = ast_.name;
  out_.isSchedule = ast_.isSchedule;
  out_.range = ast_.range;
  scopes_.emplace_back();
  params();
  if (ast_.isSchedule)
    attributes();
  out_.body = block(*ast_.body, /*topLevel=*/true);
  if (ast_.isSchedule)
    hoistRequirements(out_.body);
}

void FunctionLowering::hoistRequirements(ir::Block &body) const {
  auto rankIndependent = [this](const ir::Stmt &s) {
    if (const auto *let = std::get_if<ir::LetStmt>(&s.node))
      return static_cast<bool>(slotSameOnEveryRank_[let->slot]);
    if (const auto *req = std::get_if<ir::RequireStmt>(&s.node))
      return req->sameOnEveryRank;
    if (const auto *mesh = std::get_if<ir::MeshStmt>(&s.node))
      return std::all_of(mesh->sizes.begin(), mesh->sizes.end(),
                         [this](const ir::Expr &e) { return sameOnEveryRank(e); });
    return false;
  };
  // Up to the last such requirement only: what follows it keeps its place.
  auto last = std::find_if(body.rbegin(), body.rend(), [&](const ir::Stmt &s) {
    return std::holds_alternative<ir::RequireStmt>(s.node) && rankIndependent(s);
  });
  std::stable_partition(body.begin(), last.base(), rankIndependent);
}

const FunctionLowering::Symbol *FunctionLowering::lookup(const std::string &name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end())
      return &f->second;
  }
  return nullptr;
}

bool FunctionLowering::define(const std::string &name, SourceRange at, Symbol sym) {
  if (const Symbol *prev = lookup(name)) {
    diags_.error(at, "`" + name + "` is already defined").note(prev->defined, "`" + name + "` is defined here");
    return false;
  }
  if (isBuiltinName(name) && !(ast_.isSchedule && sym.kind == Symbol::Slot && definingParams_)) {
    diags_.error(at, "`" + name + "` is a built-in name and cannot be redefined");
    return false;
  }
  scopes_.back()[name] = sym;
  return true;
}

uint32_t FunctionLowering::newSlot(const std::string &name, bool sameOnEveryRank) {
  out_.slotNames.push_back(name);
  slotSameOnEveryRank_.push_back(sameOnEveryRank);
  return static_cast<uint32_t>(out_.slotNames.size() - 1);
}

bool FunctionLowering::sameOnEveryRank(const ir::Expr &e) const {
  switch (e.op) {
  case ir::ExprOp::Rank:
  case ir::ExprOp::AxisCoord:
  case ir::ExprOp::Held: return false;
  case ir::ExprOp::Var: return slotSameOnEveryRank_[static_cast<size_t>(e.value)];
  default: break;
  }
  return std::all_of(e.operands.begin(), e.operands.end(), [this](const ir::Expr &o) { return sameOnEveryRank(o); });
}

void FunctionLowering::params() {
  definingParams_ = true;
  bool hasLayers = false, hasBatches = false;
  for (size_t i = 0; i < ast_.params.size(); ++i) {
    const ast::Param &p = ast_.params[i];
    ir::Param param{p.name, 0, std::nullopt, p.range};
    if (p.defaultValue) {
      if (!ast_.isSchedule) {
        diags_.error(p.defaultValue->range, "procedure parameters cannot have defaults");
      } else {
        laterParams_.clear();
        for (size_t j = i; j < ast_.params.size(); ++j)
          laterParams_.push_back(ast_.params[j].name);
        param.defaultValue = intExpr(*p.defaultValue, "a parameter default");
        laterParams_.clear();
      }
    }
    param.slot = newSlot(p.name, ast_.isSchedule); // a procedure's arguments may differ by rank
    hasLayers |= p.name == "layers";
    hasBatches |= p.name == "batches";
    if (define(p.name, p.range, Symbol{Symbol::Slot, param.slot, Type::Int, p.range}))
      out_.params.push_back(std::move(param));
  }
  definingParams_ = false;
  if (ast_.isSchedule && (!hasLayers || !hasBatches))
    diags_.error(ast_.nameRange, "schedule `" + ast_.name + "` must declare the model parameters " +
                                     (hasLayers    ? "`batches`"
                                      : hasBatches ? "`layers`"
                                                   : "`layers` and `batches`"));
}

void FunctionLowering::attributes() {
  for (const ast::Attribute &a : ast_.attributes) {
    if (a.name == "p2p") {
      pointToPoint(a);
      continue;
    }
    if (a.name != "target") {
      diags_.error(a.nameRange, "unknown attribute `@" + a.name + "`" + didYouMean(a.name, {"target", "p2p"}));
      continue;
    }
    out_.targets.range = a.range;
    for (const ast::Arg &arg : a.args) {
      auto *lit = arg.value->dyn<ast::IntExpr>();
      std::optional<int64_t> *slot = arg.name == "steps"    ? &out_.targets.steps
                                     : arg.name == "memory" ? &out_.targets.memory
                                                            : nullptr;
      if (!slot) {
        diags_.error(arg.name.empty() ? arg.value->range : arg.nameRange,
                     arg.name.empty()
                         ? "`@target` takes named arguments: `steps = N`, `memory = N`"
                         : "`@target` has no argument `" + arg.name + "`" + didYouMean(arg.name, {"steps", "memory"}));
      } else if (!lit) {
        diags_.error(arg.value->range, "`@target` " + arg.name + " must be an integer literal");
      } else if (slot->has_value()) {
        diags_.error(arg.nameRange, "`@target` argument `" + arg.name + "` is given twice");
      } else {
        *slot = lit->value;
      }
    }
  }
}

// `@p2p(ordered)` or `@p2p(tagged)`: how the schedule's sends and receives meet.
void FunctionLowering::pointToPoint(const ast::Attribute &a) {
  const ast::NameExpr *name =
      a.args.size() == 1 && a.args[0].name.empty() ? a.args[0].value->dyn<ast::NameExpr>() : nullptr;
  if (!name || (name->name != "ordered" && name->name != "tagged")) {
    diags_.error(a.args.empty() ? a.range : a.args[0].value->range,
                 "`@p2p` takes `ordered` (sends and receives meet as PyTorch's over NCCL do: per pair, in the order "
                 "they were sent) or `tagged` (by tag, the default)");
    return;
  }
  out_.orderedPointToPoint = name->name == "ordered";
}

void lowerFunction(const ast::Function &fn, uint32_t id, SemaContext &ctx) {
  FunctionLowering(fn, id, ctx).run();
}

} // namespace schedc::sema
