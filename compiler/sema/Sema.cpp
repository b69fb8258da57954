// Sema — the semantic pass pipeline: declare every function (rejecting redefinitions and
// clashes with built-ins), infer storage kinds, check and lower each function, reject
// recursion and choose the entry schedule. (The driver runs the IR verifier after it.)
#include "sema/Sema.h"

#include "sema/Operations.h"
#include "sema/SemaContext.h"

#include "diagnostics/Suggest.h"

#include <algorithm>
#include <optional>

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

// The call sites of each function, by caller.
using CallSitesByCaller = std::vector<std::vector<const SemaContext::CallSite *>>;

CallSitesByCaller callSitesByCaller(const SemaContext &ctx) {
  CallSitesByCaller out(ctx.functionAsts.size());
  for (const SemaContext::CallSite &c : ctx.calls)
    out[c.caller].push_back(&c);
  return out;
}

// Reports the cycle that call site `c` closes: the part of the current call path (the call
// sites from the walk's root down to c's caller) that starts in c's callee.
void reportCycle(SemaContext &ctx, const SemaContext::CallSite &c,
                 const std::vector<const SemaContext::CallSite *> &path) {
  auto d = ctx.diags.error(c.range, "procedure `" + ctx.functionAsts[c.callee]->name +
                                        "` is called recursively; recursion is not allowed");
  size_t start = 0;
  while (start < path.size() && path[start]->caller != c.callee)
    ++start;
  for (size_t i = start; i < path.size(); ++i)
    d.note(path[i]->range, "`" + ctx.functionAsts[path[i]->caller]->name + "` calls `" +
                               ctx.functionAsts[path[i]->callee]->name + "` here");
}

// Procedures may not call themselves, directly or through others: a schedule is a finite
// program, and the interpreter and codegen rely on it. One depth-first walk of the call
// graph reports every call that closes a cycle and measures each function's call height (the
// longest chain of calls below it) in post-order. Returns the heights, or nullopt if there is
// a cycle — known here whether or not the diagnostics' limit let its error through. The walk
// keeps its own stack: a chain of calls as long as the user writes takes no native stack.
std::optional<std::vector<uint32_t>> callHeights(SemaContext &ctx, const CallSitesByCaller &sites) {
  size_t n = ctx.functionAsts.size();
  enum class Mark : uint8_t { New, OnPath, Done };
  std::vector<Mark> mark(n, Mark::New);
  std::vector<uint32_t> height(n, 0);
  struct Frame {
    uint32_t function;
    size_t nextCall; // index into sites[function]
  };
  std::vector<Frame> stack;
  std::vector<const SemaContext::CallSite *> path; // path[i] entered stack[i + 1]
  bool acyclic = true;
  for (uint32_t root = 0; root < n; ++root) {
    if (mark[root] != Mark::New)
      continue;
    mark[root] = Mark::OnPath;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.nextCall == sites[top.function].size()) { // every callee done: measure, return
        for (const SemaContext::CallSite *c : sites[top.function])
          height[top.function] = std::max(height[top.function], height[c->callee] + 1);
        mark[top.function] = Mark::Done;
        stack.pop_back();
        if (!path.empty())
          path.pop_back();
        continue;
      }
      const SemaContext::CallSite *c = sites[top.function][top.nextCall++];
      if (mark[c->callee] == Mark::OnPath) {
        acyclic = false;
        reportCycle(ctx, *c, path);
      } else if (mark[c->callee] == Mark::New) {
        mark[c->callee] = Mark::OnPath;
        path.push_back(c);
        stack.push_back({c->callee, 0});
      }
    }
  }
  if (!acyclic)
    return std::nullopt;
  return height;
}

// Calls may nest at most this deep: every level takes stack on the rank that runs it (a fiber
// with a fixed stack), so a deeper chain would overflow it.
constexpr uint32_t kMaxCallDepth = 10000;

// Records each function's call height in the IR (codegen bounds inlining with it) and rejects
// a schedule whose calls nest deeper than kMaxCallDepth.
void recordCallHeights(SemaContext &ctx, const std::vector<uint32_t> &height) {
  for (uint32_t f = 0; f < height.size(); ++f) {
    ctx.program.functions[f].callHeight = height[f];
    if (ctx.functionAsts[f]->isSchedule && height[f] > kMaxCallDepth)
      ctx.diags.error(ctx.functionAsts[f]->nameRange,
                      "calls from schedule `" + ctx.functionAsts[f]->name + "` nest " + std::to_string(height[f]) +
                          " procedures deep, more than the limit of " + std::to_string(kMaxCallDepth));
  }
}

// Reports the deferred "never assigned" errors of procedures a schedule can reach.
void reportReachableDeferred(SemaContext &ctx, const CallSitesByCaller &sites) {
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
    for (const SemaContext::CallSite *c : sites[f])
      if (!reachable[c->callee]) {
        reachable[c->callee] = true;
        work.push_back(c->callee);
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
  CallSitesByCaller sites = callSitesByCaller(ctx);
  if (std::optional<std::vector<uint32_t>> heights = callHeights(ctx, sites))
    recordCallHeights(ctx, *heights);
  reportReachableDeferred(ctx, sites);
  if (!modules.empty())
    chooseEntry(*modules.back(), options, ctx);
  return diags.hasErrors() ? nullptr : std::move(program);
}

} // namespace schedc::sema
