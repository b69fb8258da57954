// Sema — the semantic pass pipeline: declare every function (rejecting redefinitions and
// clashes with built-ins), infer storage kinds, check and lower each function, reject
// recursion and choose the entry schedule. (The driver runs the IR verifier after it.)
#include "sema/Sema.h"

#include "sema/Operations.h"
#include "sema/SemaContext.h"

#include "diagnostics/Suggest.h"

#include <functional>

namespace schedc::sema {

std::string withArticle(ir::Type t) {
  switch (t) {
  case ir::Type::Int: return "an integer";
  case ir::Type::Bool: return "a boolean";
  case ir::Type::Set: return "a set";
  case ir::Type::Weight: return "a weight";
  case ir::Type::OptState: return "an optimizer state";
  case ir::Type::Activation: return "an activation";
  case ir::Type::ActGrad: return "an activation gradient";
  case ir::Type::WeightGrad: return "a weight gradient";
  case ir::Type::Value: return "a received value";
  }
  return "a value";
}

namespace {

void declareFunctions(const std::vector<std::unique_ptr<ast::Module>> &modules, SemaContext &ctx) {
  for (const auto &m : modules)
    for (const auto &f : m->functions) {
      if (findOperation(f->name) || isBuiltinFunction(f->name) || isBuiltinName(f->name)) {
        ctx.diags.error(f->nameRange, "`" + f->name + "` is a built-in name and cannot be redefined");
        continue;
      }
      auto [it, inserted] = ctx.functionIds.try_emplace(f->name, static_cast<uint32_t>(ctx.functionAsts.size()));
      if (!inserted) {
        const ast::Function &prev = *ctx.functionAsts[it->second];
        ctx.diags
            .error(f->nameRange,
                   std::string(f->isSchedule ? "schedule" : "procedure") + " `" + f->name + "` is already defined")
            .note(prev.nameRange, "`" + f->name + "` is first defined here");
        continue;
      }
      ctx.functionAsts.push_back(f.get());
    }
  ctx.program.functions.resize(ctx.functionAsts.size());
}

// Procedures may not call themselves, directly or through others: a schedule is a finite
// program, and the interpreter and codegen rely on it.
void rejectRecursion(SemaContext &ctx) {
  size_t n = ctx.functionAsts.size();
  std::vector<std::vector<const SemaContext::CallSite *>> out(n);
  for (const SemaContext::CallSite &c : ctx.calls)
    out[c.caller].push_back(&c);
  std::vector<int> state(n, 0); // 0 new, 1 on stack, 2 done
  std::vector<const SemaContext::CallSite *> path;
  std::function<void(uint32_t)> dfs = [&](uint32_t f) {
    state[f] = 1;
    for (const SemaContext::CallSite *c : out[f]) {
      if (state[c->callee] == 1) {
        // The cycle is the part of the current call path that starts in the callee.
        auto d = ctx.diags.error(c->range, "procedure `" + ctx.functionAsts[c->callee]->name +
                                               "` is called recursively; recursion is not allowed");
        size_t start = 0;
        while (start < path.size() && path[start]->caller != c->callee)
          ++start;
        for (size_t i = start; i < path.size(); ++i)
          d.note(path[i]->range, "`" + ctx.functionAsts[path[i]->caller]->name + "` calls `" +
                                     ctx.functionAsts[path[i]->callee]->name + "` here");
        continue;
      }
      if (state[c->callee] == 0) {
        path.push_back(c);
        dfs(c->callee);
        path.pop_back();
      }
    }
    state[f] = 2;
  };
  for (uint32_t f = 0; f < n; ++f)
    if (state[f] == 0)
      dfs(f);
}

// Calls may nest at most this deep: every level takes stack on the rank that runs it (a fiber
// with a fixed stack), so a deeper chain would overflow it.
constexpr uint32_t kMaxCallDepth = 10000;

// Each function's callees, from the call sites.
std::vector<std::vector<uint32_t>> calleesOf(const SemaContext &ctx) {
  std::vector<std::vector<uint32_t>> callees(ctx.functionAsts.size());
  for (const SemaContext::CallSite &c : ctx.calls)
    callees[c.caller].push_back(c.callee);
  return callees;
}

// Records each function's call height in the IR (codegen bounds inlining with it) and rejects
// a schedule whose calls nest deeper than kMaxCallDepth. After rejectRecursion: the call
// graph is acyclic here.
void measureCallDepth(SemaContext &ctx, const std::vector<std::vector<uint32_t>> &callees) {
  size_t n = ctx.functionAsts.size();
  constexpr uint32_t kUnknown = UINT32_MAX;
  std::vector<uint32_t> height(n, kUnknown);
  std::function<uint32_t(uint32_t)> of = [&](uint32_t f) {
    if (height[f] == kUnknown) {
      uint32_t h = 0;
      for (uint32_t callee : callees[f])
        h = std::max(h, of(callee) + 1);
      height[f] = h;
    }
    return height[f];
  };
  for (uint32_t f = 0; f < n; ++f)
    ctx.program.functions[f].callHeight = of(f);
  for (uint32_t f = 0; f < n; ++f)
    if (ctx.functionAsts[f]->isSchedule && height[f] > kMaxCallDepth)
      ctx.diags.error(ctx.functionAsts[f]->nameRange,
                      "calls from schedule `" + ctx.functionAsts[f]->name + "` nest " + std::to_string(height[f]) +
                          " procedures deep, more than the limit of " + std::to_string(kMaxCallDepth));
}

// Reports the deferred "never assigned" errors of procedures a schedule can reach.
void reportReachableDeferred(SemaContext &ctx, const std::vector<std::vector<uint32_t>> &callees) {
  std::vector<bool> reachable(ctx.functionAsts.size());
  std::vector<uint32_t> work;
  for (uint32_t f = 0; f < ctx.functionAsts.size(); ++f)
    if (ctx.functionAsts[f]->isSchedule) {
      reachable[f] = true;
      work.push_back(f);
    }
  while (!work.empty()) {
    uint32_t f = work.back();
    work.pop_back();
    for (uint32_t callee : callees[f])
      if (!reachable[callee]) {
        reachable[callee] = true;
        work.push_back(callee);
      }
  }
  for (const SemaContext::Deferred &d : ctx.deferred)
    if (reachable[d.function])
      ctx.diags.error(d.range, d.message);
}

void chooseEntry(const ast::Module &main, const SemaOptions &options, SemaContext &ctx) {
  if (!options.entry.empty()) {
    auto it = ctx.functionIds.find(options.entry);
    if (it == ctx.functionIds.end() || !ctx.functionAsts[it->second]->isSchedule) {
      std::vector<std::string_view> names;
      for (const ast::Function *f : ctx.functionAsts)
        if (f->isSchedule)
          names.push_back(f->name);
      ctx.diags.error({}, "no schedule named `" + options.entry + "`" + didYouMean(options.entry, names));
      return;
    }
    ctx.program.entry = it->second;
    return;
  }
  std::optional<uint32_t> only;
  for (const auto &f : main.functions) {
    if (!f->isSchedule)
      continue;
    auto it = ctx.functionIds.find(f->name);
    if (it == ctx.functionIds.end() || ctx.functionAsts[it->second] != f.get())
      continue;
    if (only) {
      only.reset();
      return; // several schedules: the driver asks for --schedule when it needs one
    }
    only = it->second;
  }
  ctx.program.entry = only;
}

} // namespace

std::unique_ptr<ir::Program> analyze(const std::vector<std::unique_ptr<ast::Module>> &modules,
                                     const SemaOptions &options, DiagnosticEngine &diags) {
  auto program = std::make_unique<ir::Program>();
  SemaContext ctx{diags, *program, {}, {}, {}, {}, {}, {}};
  declareFunctions(modules, ctx);
  inferStorageKinds(modules, ctx);
  for (uint32_t id = 0; id < ctx.functionAsts.size() && !diags.limitReached(); ++id)
    lowerFunction(*ctx.functionAsts[id], id, ctx);
  std::vector<std::vector<uint32_t>> callees = calleesOf(ctx);
  unsigned before = diags.errorCount();
  rejectRecursion(ctx);
  if (diags.errorCount() == before)
    measureCallDepth(ctx, callees);
  reportReachableDeferred(ctx, callees);
  if (!modules.empty())
    chooseEntry(*modules.back(), options, ctx);
  return diags.hasErrors() ? nullptr : std::move(program);
}

} // namespace schedc::sema
