// Space implementation: the family table and the enumeration, loops nested from the layout
// outwards (t, p, d, b, then the model's switches and the family's own choices).
#include "plan/Space.h"

#include "diagnostics/InternalError.h"

#include <algorithm>
#include <tuple>

namespace schedc::plan {

const std::vector<Family> &families() {
  // Pipelines of one replica; Megatron-LM's mesh; data parallelism (stdlib/*.sched).
  static const std::vector<Family> all = {
      {.name = "gpipe", .layout = Layout::Pipeline, .order = Order::FillDrain},
      {.name = "1f1b", .layout = Layout::Pipeline},
      {.name = "interleaved", .layout = Layout::Pipeline, .chunks = true},
      {.name = "zbh1", .layout = Layout::Pipeline, .splitsBackward = true},
      {.name = "zbv", .layout = Layout::Pipeline, .order = Order::VShape, .splitsBackward = true},
      {.name = "dualpipev",
       .layout = Layout::Pipeline,
       .order = Order::VShape,
       .splitsBackward = true,
       .minBatchesPerStage = 2},
      {.name = "zbsearch", .layout = Layout::Pipeline, .order = Order::Searched, .splitsBackward = true},
      {.name = "megatron", .layout = Layout::Mesh, .chunks = true, .distributed = true},
      {.name = "moe", .layout = Layout::ExpertMesh},
      {.name = "dualpipev_moe",
       .layout = Layout::ExpertMesh,
       .order = Order::VShape,
       .splitsBackward = true,
       .minBatchesPerStage = 2,
       .minPerPipeline = true},
      {.name = "ddp", .layout = Layout::DataParallel, .order = Order::FillDrain, .buckets = true},
      {.name = "zero1", .layout = Layout::DataParallel, .order = Order::FillDrain, .shardsOptimizer = true},
      {.name = "zero2",
       .layout = Layout::DataParallel,
       .order = Order::FillDrain,
       .keepsGradients = false,
       .shardsOptimizer = true},
      {.name = "zero3",
       .layout = Layout::DataParallel,
       .order = Order::FillDrain,
       .keepsGradients = false,
       .shardsWeights = true,
       .shardsOptimizer = true},
      {.name = "fsdp_prefetch",
       .layout = Layout::DataParallel,
       .order = Order::FillDrain,
       .keepsGradients = false,
       .shardsWeights = true,
       .shardsOptimizer = true},
      {.name = "zero_offload",
       .layout = Layout::DataParallel,
       .order = Order::FillDrain,
       .keepsGradients = false,
       .shardsOptimizer = true,
       .offloadsOptimizer = true},
      {.name = "zero_infinity",
       .layout = Layout::DataParallel,
       .order = Order::FillDrain,
       .keepsGradients = false,
       .shardsWeights = true,
       .shardsOptimizer = true,
       .offloadsOptimizer = true,
       .offloadsWeights = true,
       .offloadsActivations = true},
  };
  return all;
}

const Family *findFamily(const std::string &name) {
  for (const Family &f : families())
    if (name == f.name)
      return &f;
  return nullptr;
}

std::string familyNames() {
  std::string names;
  for (const Family &f : families())
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

std::vector<std::string> Settings::modelSettings(const std::vector<std::string> &fixedByUser,
                                                 const Settings &model) const {
  auto set = [&](const char *key, bool differs) {
    return differs && std::find(fixedByUser.begin(), fixedByUser.end(), key) == fixedByUser.end();
  };
  std::vector<std::string> out;
  if (set("tensor_parallel", tensorParallel != model.tensorParallel))
    out.push_back("tensor_parallel=" + std::to_string(tensorParallel));
  if (set("sequence_parallel", sequenceParallel != model.sequenceParallel))
    out.push_back(std::string("sequence_parallel=") + (sequenceParallel ? "true" : "false"));
  if (set("recompute", recompute != model.recompute))
    out.push_back(std::string("recompute=") + cost::recomputeName(recompute));
  if (set("micro_batch", microBatch != model.microBatch))
    out.push_back("micro_batch=" + std::to_string(microBatch));
  return out;
}

bool Settings::operator<(const Settings &o) const {
  return std::tie(tensorParallel, microBatch, sequenceParallel, recompute) <
         std::tie(o.tensorParallel, o.microBatch, o.sequenceParallel, o.recompute);
}

std::map<std::string, int64_t> Candidate::defines() const {
  if (searched())
    return {};
  std::map<std::string, int64_t> d{{"ranks", ranks()}, {"batches", batches}};
  if (family->layout == Layout::ExpertMesh) {
    d["stages"] = stages;
    d["experts"] = experts;
    d["dense_layers"] = denseLayers;
  }
  if (family->layout == Layout::Mesh) {
    d["stages"] = stages;
    d["tensors"] = 1; // tensor parallelism is the model's (`tensor_parallel`)
    d["sequence"] = 0;
    d["distributed"] = distributed ? 1 : 0;
  }
  if (family->chunks)
    d["chunks"] = chunks;
  if (family->buckets)
    d["bucket"] = bucket;
  return d;
}

std::vector<std::pair<int64_t, int64_t>> Candidate::stageChunks(int64_t stage, int64_t layers) const {
  if (vShape()) {
    int64_t n = layers / (2 * stages);
    return {{stage * n, (stage + 1) * n}, {(2 * stages - 1 - stage) * n, (2 * stages - stage) * n}};
  }
  int64_t n = layers / (stages * chunks);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t c = 0; c < chunks; ++c)
    out.emplace_back((c * stages + stage) * n, (c * stages + stage + 1) * n);
  return out;
}

std::string Candidate::describe() const {
  std::string text = std::string(family->name) + " t=" + std::to_string(settings.tensorParallel) +
                     " p=" + std::to_string(stages) + " d=" + std::to_string(replicas);
  if (family->chunks)
    text += " v=" + std::to_string(chunks);
  if (family->layout == Layout::ExpertMesh)
    text += " ep=" + std::to_string(experts);
  if (searched())
    text += " budget=" + std::to_string(budget);
  text += " b=" + std::to_string(settings.microBatch);
  if (settings.sequenceParallel)
    text += " sp";
  if (settings.recompute != cost::Recompute::None)
    text += std::string(" ") + cost::recomputeName(settings.recompute);
  if (distributed)
    text += " distopt";
  if (family->buckets)
    text += " bucket=" + std::to_string(bucket);
  return text;
}

namespace {

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= n; ++k)
    if (n % k == 0)
      out.push_back(k);
  return out;
}

// Whether `family` runs `stages` x `replicas` ranks at all.
bool laysOut(const Family &family, int64_t stages, int64_t replicas) {
  switch (family.layout) {
  case Layout::Pipeline: return stages >= 2 && replicas == 1;
  case Layout::Mesh: return true;
  case Layout::DataParallel: return stages == 1;
  case Layout::ExpertMesh: return replicas >= 2;
  }
  SCHEDC_UNREACHABLE("a layout without its ranks");
}

// The chunk counts `family` may take with `stages` stages of `layers` layers, each stage's
// chunks of equal layers: interleaved, v >= 2 dividing the layers of a stage (megatron,
// v >= 1; v = 1 only with one stage); in a V, two chunks a stage; else one.
std::vector<int64_t> chunkCounts(const Family &family, int64_t layers, int64_t stages) {
  int64_t pieces = stages * (family.order == Order::VShape ? 2 : 1);
  if (layers % pieces != 0)
    return {};
  if (!family.chunks)
    return {1};
  std::vector<int64_t> out;
  for (int64_t v : divisorsOf(layers / stages))
    if ((v >= 2 || family.layout == Layout::Mesh) && (v == 1 || stages >= 2))
      out.push_back(v);
  return out;
}

// The expert-parallel groups `family` may take on `replicas` replicas of a model with
// `modelExperts` routed experts: e >= 2 dividing both (whole experts a slice), at t = 1; one
// (no group) for the other families.
std::vector<int64_t> expertGroups(const Family &family, int64_t replicas, int64_t modelExperts,
                                  int64_t tensorParallel) {
  if (family.layout != Layout::ExpertMesh)
    return {1};
  std::vector<int64_t> out;
  for (int64_t e : divisorsOf(replicas))
    if (e >= 2 && modelExperts % e == 0 && tensorParallel == 1)
      out.push_back(e);
  return out;
}

// DDP's buckets: 1, 2, 4, ... layers below the model's, and all of them (one call after the
// whole backward); one (no choice) for the other families. The bounds hold for each: they
// count no communication.
std::vector<int64_t> bucketsOf(const Family &family, int64_t layers) {
  if (!family.buckets)
    return {1};
  std::vector<int64_t> out;
  for (int64_t k = 1; k < layers; k *= 2)
    out.push_back(k);
  out.push_back(layers);
  return out;
}

// A searched order's budgets: 1F1B's activations (p), half as much again, twice (ZB-H2's),
// each no more than the step's micro-batches can use; one 0 for the others.
std::vector<int64_t> budgetsOf(const Family &family, int64_t stages, int64_t batches) {
  if (family.order != Order::Searched)
    return {0};
  std::vector<int64_t> out;
  for (int64_t budget : {stages, stages + stages / 2, 2 * stages})
    if (out.empty() || (budget > out.back() && budget <= batches))
      out.push_back(budget);
  return out;
}

// The model's settings on d replicas: each micro-batch size dividing a replica's share of the
// global batch, sequence parallelism where t > 1, each recomputation; those the user fixed.
std::vector<Settings> settingsOf(const Problem &problem, int64_t t, int64_t d) {
  std::vector<Settings> out;
  for (int64_t b : divisorsOf(problem.globalBatch / d))
    for (bool sp : {false, true})
      for (cost::Recompute rc : {cost::Recompute::None, cost::Recompute::Selective, cost::Recompute::Full})
        if ((!problem.microBatch || *problem.microBatch == b) && !(sp && t == 1) &&
            (!problem.sequenceParallel || *problem.sequenceParallel == sp) &&
            (!problem.recompute || *problem.recompute == rc))
          out.push_back(Settings{t, b, sp, rc});
  return out;
}

// Every layout of the accelerators with its settings (no family yet): t within a node, p
// stages (at most the layers), d replicas dividing the global batch.
std::vector<Candidate> layoutsOf(const Problem &problem) {
  std::vector<Candidate> out;
  for (int64_t t : divisorsOf(problem.perNode)) {
    if (problem.accelerators % t != 0 || (problem.tensorParallel && *problem.tensorParallel != t))
      continue;
    for (int64_t p : divisorsOf(problem.accelerators / t)) {
      int64_t d = problem.accelerators / (t * p);
      if (p > problem.layers || problem.globalBatch % d != 0)
        continue;
      for (const Settings &settings : settingsOf(problem, t, d)) {
        Candidate c;
        c.settings = settings;
        c.stages = p;
        c.replicas = d;
        c.batches = problem.globalBatch / settings.microBatch;
        out.push_back(c);
      }
    }
  }
  return out;
}

} // namespace

std::vector<Candidate> enumerate(const Problem &problem) {
  auto searching = [&](const char *name) {
    return std::find_if(problem.families.begin(), problem.families.end(),
                        [&](const Family *f) { return std::string(f->name) == name; }) != problem.families.end();
  };
  const bool oneFOneB = searching("1f1b"), interleaved = searching("interleaved");
  std::vector<Candidate> out;
  for (Candidate c : layoutsOf(problem))
    for (const Family *f : problem.families) {
      const int64_t counted = f->minPerPipeline ? c.batches / c.replicas : c.batches;
      if (!laysOut(*f, c.stages, c.replicas) || counted < f->minBatchesPerStage * c.stages)
        continue;
      c.family = f;
      for (int64_t v : chunkCounts(*f, problem.layers, c.stages)) {
        if (f->layout == Layout::Mesh && c.replicas == 1 && (v == 1 ? c.stages == 1 || oneFOneB : interleaved))
          continue; // 1f1b's or interleaved's run (or one accelerator's), under its own name
        c.chunks = v;
        for (int64_t e : expertGroups(*f, c.replicas, problem.modelExperts, c.settings.tensorParallel))
          for (int64_t budget : budgetsOf(*f, c.stages, c.batches))
            for (int64_t bucket : bucketsOf(*f, problem.layers))
              for (bool distributed : {false, true})
                if (!distributed || (f->distributed && c.replicas > 1)) {
                  c.experts = e;
                  c.denseLayers = e > 1 ? problem.denseLayers : 0;
                  c.budget = budget;
                  c.bucket = bucket;
                  c.distributed = distributed;
                  out.push_back(c);
                }
      }
    }
  return out;
}

} // namespace schedc::plan
