// CostChoice implementation: a description is a preset when its name is one; a name with
// neither '/' nor '.' that is not one is an unknown preset (not a file looked for), anything
// else a file; settings are applied in order, each checked with the whole description.
#include "run/CostChoice.h"

#include "cost/HardwareCost.h"
#include "cost/TransformerFile.h"
#include "diagnostics/Diagnostics.h"

namespace schedc::sim {

namespace {

// How to read one kind of description.
template <class T> struct DescriptionKind {
  const char *what;   // "model", "hardware"
  const char *option; // "--model"
  const char *files;  // "a TOML file": what a path may name
  const T *(*findPreset)(const std::string &);
  std::string (*presetNames)();
  std::optional<T> (*parse)(const std::string &, cost::FileProblem &);
  std::string (*set)(T &, const std::string &, const std::string &);
};

const DescriptionKind<cost::Transformer> kModel{"model",
                                                "--model",
                                                "a TOML file or a Hugging Face config.json",
                                                cost::findTransformerPreset,
                                                cost::transformerPresetNames,
                                                cost::parseTransformer,
                                                cost::setTransformerField};
const DescriptionKind<cost::Hardware> kHardware{
    "hardware",          "--hardware",          "a TOML file", cost::findHardwarePreset, cost::hardwarePresetNames,
    cost::parseHardware, cost::setHardwareField};

DescriptionProblem refused(std::string message, int exitCode) {
  DescriptionProblem p;
  p.message = std::move(message);
  p.exitCode = exitCode;
  return p;
}

// The description `name` names, with `settings` applied; nullopt with `problem` set.
template <class T>
std::optional<T> describe(const DescriptionKind<T> &kind, const std::string &name,
                          const std::vector<std::string> &settings, const ReadText &read, DescriptionProblem &problem) {
  std::optional<T> d;
  if (const T *preset = kind.findPreset(name)) {
    d = *preset;
  } else if (name.find('/') == std::string::npos && name.find('.') == std::string::npos) {
    problem = refused("unknown " + std::string(kind.what) + " `" + name + "` (presets: " + kind.presetNames() +
                          "; or the path of " + kind.files + ")",
                      kExitUsage);
    return std::nullopt;
  } else {
    std::string error;
    std::optional<std::string> text = read(name, error);
    if (!text) {
      problem = refused("cannot read the " + std::string(kind.what) + " file `" + name + "`: " + error, kExitIoError);
      return std::nullopt;
    }
    cost::FileProblem bad;
    d = kind.parse(*text, bad);
    if (!d) {
      problem = {bad.message, kExitSourceError, name, bad.line, bad.column};
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
      problem = refused(std::string(kind.option) + "-set: " + wrong, kExitUsage);
      return std::nullopt;
    }
  }
  return d;
}

} // namespace

std::string DescriptionProblem::located() const {
  if (file.empty())
    return message;
  if (!line)
    return file + ": " + message;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

bool resolveCostModel(SharedOptions &options, const ReadText &read, DescriptionProblem &problem) {
  if (!options.hardwareCost)
    return true;
  std::shared_ptr<const cost::LayerModel> layers;
  if (options.model.empty()) { // the real backends' own layer, at --hidden and --tokens
    layers = cost::tanhLayers(options.bytes.hidden, options.bytes.tokens);
  } else {
    std::optional<cost::Transformer> model = describe(kModel, options.model, options.modelSettings, read, problem);
    if (!model)
      return false;
    options.bytes.transformer = std::make_shared<const cost::Transformer>(*model);
    layers = cost::transformerLayers(std::move(*model));
  }
  std::optional<cost::Hardware> hardware =
      describe(kHardware, options.hardware, options.hardwareSettings, read, problem);
  if (!hardware)
    return false;
  const ByteModel &bytes = options.bytes;
  cost::TrainingPrecision precision{bytes.precision == Precision::Bf16, bytes.fp32Gradients, bytes.optimizerStates,
                                    bytes.tf32};
  auto cost = std::make_shared<const cost::HardwareCost>(std::move(layers), std::move(*hardware), precision);
  options.costModel = cost.get();
  options.ownedCostModel = std::move(cost);
  options.bytes.given = true; // the report shows the bytes of the model it times
  return true;
}

bool applyModelLayers(const SharedOptions &options, const RunSetup &setup, std::map<std::string, int64_t> &params,
                      DiagnosticEngine &diags) {
  const auto *cost = dynamic_cast<const cost::HardwareCost *>(options.costModel);
  if (!cost || !hasParameter(setup, "layers"))
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

} // namespace schedc::sim
