// CostModels implementation: a description is a preset when its name is one, else a file;
// settings are KEY=VALUE over it.
#include "driver/CostModels.h"

#include "cost/HardwareCost.h"
#include "cost/TransformerFile.h"
#include "driver/FrontEnd.h"

namespace schedc::driver {

namespace {

// How to read one kind of description.
template <class T> struct DescriptionKind {
  const char *what;   // "model", "hardware"
  const char *option; // "--model"
  const T *(*findPreset)(const std::string &);
  std::string (*presetNames)();
  std::optional<T> (*parse)(const std::string &, cost::FileProblem &);
  std::string (*set)(T &, const std::string &, const std::string &);
};

// The description `name` names, with `settings` applied; nullopt after reporting (`exitCode`).
template <class T>
std::optional<T> describe(const DescriptionKind<T> &kind, const std::string &name,
                          const std::vector<std::string> &settings, SourceManager &sources, DiagnosticEngine &diags,
                          int &exitCode) {
  std::optional<T> d;
  if (const T *preset = kind.findPreset(name)) {
    d = *preset;
  } else if (name.find('/') == std::string::npos && name.find('.') == std::string::npos) {
    exitCode = usageError("unknown " + std::string(kind.what) + " `" + name + "` (presets: " + kind.presetNames() +
                          "; or the path of a TOML file)");
    return std::nullopt;
  } else {
    std::string error;
    std::optional<uint32_t> file = sources.load(name, error);
    if (!file) {
      diags.error({}, "cannot read the " + std::string(kind.what) + " file `" + name + "`: " + error);
      exitCode = kExitIoError;
      return std::nullopt;
    }
    cost::FileProblem problem;
    d = kind.parse(sources.text(*file), problem);
    if (!d) {
      SourceLoc at{*file, static_cast<uint32_t>(problem.line), static_cast<uint32_t>(problem.column)};
      diags.error(at, problem.line ? problem.message : name + ": " + problem.message);
      exitCode = kExitSourceError;
      return std::nullopt;
    }
  }
  if (d->name.empty()) // a file that names none
    d->name = name;
  for (const std::string &s : settings) {
    size_t eq = s.find('=');
    std::string wrong = eq == std::string::npos ? "expected KEY=VALUE, not `" + s + "`"
                                                : kind.set(*d, s.substr(0, eq), s.substr(eq + 1));
    if (wrong.empty())
      wrong = d->invalid();
    if (!wrong.empty()) {
      exitCode = usageError(std::string(kind.option) + "-set: " + wrong);
      return std::nullopt;
    }
  }
  return d;
}

const DescriptionKind<cost::Transformer> kModel{"model",
                                                "--model",
                                                cost::findTransformerPreset,
                                                cost::transformerPresetNames,
                                                cost::parseTransformer,
                                                cost::setTransformerField};
const DescriptionKind<cost::Hardware> kHardware{
    "hardware",          "--hardware",          cost::findHardwarePreset, cost::hardwarePresetNames,
    cost::parseHardware, cost::setHardwareField};

} // namespace

int resolveCostModel(Options &opts, SourceManager &sources, DiagnosticEngine &diags) {
  if (!opts.hardwareCost)
    return kExitOk;
  int exitCode = kExitOk;
  std::shared_ptr<const cost::LayerModel> layers;
  if (opts.model.empty()) { // the real backends' own layer, at --hidden and --tokens
    layers = cost::tanhLayers(opts.bytes.hidden, opts.bytes.tokens);
  } else {
    std::optional<cost::Transformer> model = describe(kModel, opts.model, opts.modelSettings, sources, diags, exitCode);
    if (!model)
      return exitCode;
    opts.bytes.transformer = std::make_shared<const cost::Transformer>(*model);
    layers = cost::transformerLayers(std::move(*model));
  }
  std::optional<cost::Hardware> hardware =
      describe(kHardware, opts.hardware, opts.hardwareSettings, sources, diags, exitCode);
  if (!hardware)
    return exitCode;
  cost::TrainingPrecision precision{opts.bytes.precision == sim::Precision::Bf16, opts.bytes.fp32Gradients,
                                    opts.bytes.optimizerStates, opts.bytes.tf32};
  opts.bytes.given = true;
  auto cost = std::make_shared<const cost::HardwareCost>(std::move(layers), std::move(*hardware), precision);
  opts.costModel = cost.get();
  opts.ownedCostModel = std::move(cost);
  return kExitOk;
}

bool applyModelLayers(const Options &opts, bool hasLayers, std::map<std::string, int64_t> &params,
                      DiagnosticEngine &diags) {
  const auto *cost = dynamic_cast<const cost::HardwareCost *>(opts.costModel);
  if (!cost || !hasLayers)
    return true;
  int64_t layers = cost->model().layers();
  if (layers == 0) // the tanh layer: as many as the schedule has
    return true;
  auto [it, added] = params.emplace("layers", layers);
  if (!added && it->second != layers) {
    diags.error({}, "-D layers=" + std::to_string(it->second) + ", but the model " + cost->model().name() + " has " +
                        std::to_string(layers) +
                        " layers (a schedule's layers are the model's; set them with "
                        "--model-set=layers=N)");
    return false;
  }
  return true;
}

} // namespace schedc::driver
