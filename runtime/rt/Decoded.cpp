// Decoded implementation: the description's tables into SourceManager, locations and
// RunSetup; parameters through the compiled `parameters` function.
#include "rt/Decoded.h"
#include "rt/RankContext.h"

#include <cstring>

namespace schedc::rt {

Decoded::Decoded(const schedc_program &p) : program(p), values(p.num_params, 0) {
  for (uint32_t i = 0; i < p.num_files; ++i)
    sources.addBuffer(p.files[i].path, p.files[i].text);
  for (uint32_t i = 0; i < p.num_locations; ++i) {
    const schedc_location &l = p.locations[i];
    locations.push_back(SourceRange{{l.file + 1, l.line, l.col}, {l.file + 1, l.end_line, l.end_col}});
  }
  axes.assign(p.axes, p.axes + p.num_axes);
  setup.schedule = p.schedule;
  setup.scheduleAt = SourceRange(locations[p.schedule_loc].begin);
  setup.file = sources.name(setup.scheduleAt.begin.file);
  for (uint32_t i = 0; i < p.num_params; ++i)
    setup.params.push_back(sim::ParamSpec{p.params[i].name, p.params[i].has_default != 0, locations[p.params[i].loc]});
  for (uint32_t i = 0; i < p.num_arrays; ++i) {
    int32_t k = p.arrays[i].kind; // an enum schedc_value_kind
    SCHEDC_ASSERT(k == SCHEDC_KIND_UNKNOWN || (k >= 0 && k < kValueKinds), "an array of no kind of value");
    setup.arrays.push_back(sim::ArrayInfo{
        p.arrays[i].name, k == SCHEDC_KIND_UNKNOWN ? std::nullopt : std::optional(static_cast<sim::Kind>(k))});
  }
  if (p.target_steps >= 0)
    setup.targetSteps = p.target_steps;
  if (p.target_memory >= 0)
    setup.targetMemory = p.target_memory;
  setup.p2p = p.ordered_p2p ? sim::PointToPoint::Ordered : sim::PointToPoint::Tagged;
}

std::optional<std::vector<int64_t>> Decoded::evaluate(const std::map<std::string, int64_t> &overrides,
                                                      DiagnosticEngine &diags) {
  std::vector<uint8_t> overridden(program.num_params, 0);
  for (uint32_t i = 0; i < program.num_params; ++i)
    if (auto it = overrides.find(program.params[i].name); it != overrides.end()) {
      values[i] = it->second;
      overridden[i] = 1;
    }
  RankContext context(locations, axes);
  context.paramDiags = &diags;
  program.parameters(reinterpret_cast<schedc_rank *>(&context), values.data(), overridden.data());
  if (context.paramsFailed)
    return std::nullopt;
  return values;
}

int64_t Decoded::parameter(const char *name, int64_t otherwise) const {
  for (uint32_t i = 0; i < program.num_params; ++i)
    if (std::strcmp(program.params[i].name, name) == 0)
      return values[i];
  return otherwise;
}

std::function<void(sim::Rank &)> Decoded::body(const LocalRank *local) const {
  return [this, local](sim::Rank &rank) {
    RankContext context(locations, axes);
    context.rank = &rank;
    if (local && rank.id() == local->rank) {
      context.compute = local->compute;
      context.measured = local->measured;
      context.origin = local->origin;
      context.settle = local->settle;
      rank.measurePayloads(true);
    }
    program.entry(reinterpret_cast<schedc_rank *>(&context), values.data());
  };
}

} // namespace schedc::rt
