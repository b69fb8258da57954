// CostModels implementation: the descriptions are resolved by run/CostChoice.h; here their
// files are read through the SourceManager, so that a problem in one is shown at its line.
#include "driver/CostModels.h"

#include "cost/HardwareCost.h"
#include "driver/FrontEnd.h"
#include "run/CostChoice.h"

namespace schedc::driver {

sim::ReadText sourceReader(SourceManager &sources, std::map<std::string, uint32_t> *read) {
  return [&sources, read](const std::string &path, std::string &error) -> std::optional<std::string> {
    std::optional<uint32_t> file = sources.load(path, error);
    if (!file)
      return std::nullopt;
    if (read)
      (*read)[path] = *file;
    return std::string(sources.text(*file));
  };
}

int resolveCostModel(Options &opts, SourceManager &sources, DiagnosticEngine &diags) {
  std::map<std::string, uint32_t> files; // those read, for a problem's location
  sim::DescriptionProblem problem;
  if (sim::resolveCostModel(opts, sourceReader(sources, &files), problem))
    return kExitOk;
  if (problem.exitCode == kExitUsage)
    return usageError(problem.message);
  if (problem.exitCode == kExitSourceError) {
    SourceLoc at{files.at(problem.file), static_cast<uint32_t>(problem.line), static_cast<uint32_t>(problem.column)};
    diags.error(at, problem.line ? problem.message : problem.file + ": " + problem.message);
  } else {
    diags.error({}, problem.message);
  }
  return problem.exitCode;
}

} // namespace schedc::driver
