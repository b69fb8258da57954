// Bytes implementation: the per-kind widths of the table in the header, the element counts
// of values, and the options that set the model.
#include "sim/Bytes.h"
#include "options/OptionValues.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace schedc::sim {

const char *precisionName(Precision p) {
  return p == Precision::Bf16 ? "bf16" : "fp32";
}

const char *byteShareKey(ByteShare s) {
  return s == ByteShare::OptimizerState ? "optimizer_state" : byteShareName(s);
}

const char *byteShareName(ByteShare s) {
  switch (s) {
  case ByteShare::Parameters: return "parameters";
  case ByteShare::Gradients: return "gradients";
  case ByteShare::OptimizerState: return "optimizer state";
  case ByteShare::Activations: return "activations";
  case ByteShare::Logits: return "logits";
  }
  return "";
}

double ByteModel::tokenCopiesBytes(const Value &v, double copies) const {
  double batches = static_cast<double>(v.batches ? v.batches->size() : 0);
  return batches * copies * transformer->boundaryElements() * elementBytes(v.kind);
}

double ByteModel::transformerBytes(const Value &v, LayerForm form) const {
  const cost::Transformer &t = *transformer;
  const int64_t layerParts = form.parts;
  double batches = static_cast<double>(v.batches ? v.batches->size() : 0);
  double boundary = t.boundaryElements() * elementBytes(v.kind);
  // A mixture-of-experts layer's tokens: at the router, each token's copies for its top-k (the
  // dispatch buffer); at the experts, their share of the group's, which before the experts
  // (an activation) keeps what the experts keep for their backward.
  const double copies = t.dispatchFactor();
  if (v.split == Split::Routed)
    return tokenCopiesBytes(v, copies);
  if (v.split == Split::Dispatched && v.kind == Kind::Activation)
    return routedActivationBytes(v.layer, batches / static_cast<double>(v.total));
  if (atExperts(v.split))
    return tokenCopiesBytes(v, copies / static_cast<double>(v.total));
  switch (v.kind) {
  case Kind::Activation:
    if (v.layer >= 0 && v.layer < t.layers) {
      if (layerParts > 1 && v.split == Split::None) // the input whole, the rest a part's (at 16 bits)
        return batches * t.partActivationBytes(v.layer, layerParts, false) * elementBytes(v.kind) / 2;
      // The dense part's (the experts' are the dispatched tokens'); under full recomputation
      // the layer's input is its checkpoint either way.
      if (form.expertsApart && t.recompute != cost::Recompute::Full)
        return (layerActivationBytes(v.layer, batches) - routedActivationBytes(v.layer, batches)) * sequenceShare(v);
      return layerActivationBytes(v.layer, batches) * sequenceShare(v);
    }
    // The last layer's output: its fp32 logits, split by vocabulary among the tensor-parallel
    // accelerators (the model's, and a schedule's parts of the last layer), and as the value
    // is along the sequence (a schedule's shard before the loss gathers it).
    return logitsBytes(batches, layerParts, sequenceShare(v));
  case Kind::ActGrad: return batches * boundary * sequenceShare(v);
  case Kind::WeightGrad:
    if (t.mainGradBuffer && v.tier == Tier::Device) // accumulated in the weight's buffer
      return 0;
    break;
  case Kind::Weight: return weightShareBytes(v) + gradientBufferBytes(v);
  case Kind::OptState: break;
  }
  return weightShareBytes(v);
}

double ByteModel::layerActivationBytes(int64_t layer, double microBatches) const {
  // cost::Transformer counts them at 16 bits; fp32 takes twice as many
  return microBatches * transformer->activationBytes(layer) * elementBytes(Kind::Activation) / 2;
}

double ByteModel::routedActivationBytes(int64_t layer, double microBatches) const {
  return microBatches * transformer->routedActivationBytes(layer) * elementBytes(Kind::Activation) / 2;
}

double ByteModel::logitsBytes(double microBatches, int64_t layerParts, double sequenceShare) const {
  const cost::Transformer &t = *transformer;
  return microBatches * static_cast<double>(t.sequence * t.microBatch) * static_cast<double>(t.vocab) /
         static_cast<double>(t.tensorParallel * layerParts) * 4 * sequenceShare;
}

double ByteModel::weightShareBytes(const Value &v) const {
  const cost::Transformer &t = *transformer;
  double share = v.total > 0 ? static_cast<double>(v.shards ? v.shards->size() : 0) / static_cast<double>(v.total) : 0;
  int64_t layer = std::clamp<int64_t>(v.layer, 0, t.layers - 1);
  double copy = v.embeddingCopy && layer == t.layers - 1 ? t.embeddingCopyParameters() : 0;
  // A side of a mixture-of-experts layer: its dense part, or its routed experts.
  double routed = t.rankRoutedParameters(layer);
  double parameters = v.split == Split::Experts ? routed
                      : v.split == Split::Dense ? t.rankParameters(layer) - routed
                                                : t.rankParameters(layer);
  return share * (parameters + copy) * elementBytes(v.kind);
}

double ByteModel::gradientBufferBytes(const Value &v) const {
  if (!transformer || !transformer->mainGradBuffer || v.kind != Kind::Weight || v.tier != Tier::Device)
    return 0; // (the buffer is the device's: a weight elsewhere is its own bytes alone)
  return weightShareBytes(v) / elementBytes(v.kind) * 4;
}

double ByteModel::tensorBytes(const Value &v) const {
  if (!transformer)
    return bytes(v);
  double batches = static_cast<double>(v.batches ? v.batches->size() : 0);
  return batches * transformer->boundaryElements() * elementBytes(v.kind) * sequenceShare(v);
}

std::string ByteModel::describe() const {
  std::string gradients = precision == Precision::Bf16 && fp32Gradients ? " with fp32 gradients"
                          : tf32                                        ? " with TF32 GEMMs"
                                                                        : "";
  std::string shape =
      transformer ? transformer->name : "hidden " + std::to_string(hidden) + ", tokens " + std::to_string(tokens);
  if (!transformer && (experts > 0 || topK > 1))
    shape += ", " + (experts > 0 ? std::to_string(experts) + " experts" : std::string("experts by slice")) + ", top-" +
             std::to_string(topK);
  if (transformer && transformer->tensorParallel > 1) // a rank is one accelerator of each group
    shape += ", per accelerator of tensor-parallel groups of " + std::to_string(transformer->tensorParallel) +
             (transformer->sequenceParallel ? " with sequence parallelism" : "");
  return shape + ", " + precisionName(precision) + gradients + ", " + std::to_string(optimizerStates) +
         " optimizer state" + (optimizerStates == 1 ? "" : "s");
}

std::string byteModelFlag(const std::string &arg) {
  std::string flag = arg.substr(0, arg.find('='));
  return flag == "--hidden" || flag == "--tokens" || flag == "--optimizer" || flag == "--precision" ||
                 flag == "--grad-precision" || flag == "--experts" || flag == "--top-k"
             ? flag
             : "";
}

bool parseByteModelOption(const std::string &flag, const std::string &value, ByteModel &m, std::string &error) {
  auto number = [&](int64_t lo, int64_t hi, int64_t &out, const char *what) {
    uint64_t n = 0;
    if (parseWholeNumber(value, static_cast<uint64_t>(lo), static_cast<uint64_t>(hi), n))
      out = static_cast<int64_t>(n);
    else
      error = flag + " needs " + what + " from " + std::to_string(lo) + " to " + std::to_string(hi);
  };
  if (flag == "--hidden")
    number(1, 65536, m.hidden, "a size");
  else if (flag == "--tokens")
    number(1, 1048576, m.tokens, "a number");
  else if (flag == "--experts")
    number(1, 32768, m.experts, "a number of experts");
  else if (flag == "--top-k")
    number(1, 32768, m.topK, "a number of experts a token goes to");
  else if (flag == "--optimizer") {
    if (value == "sgd" || value == "adam")
      m.optimizerStates = value == "adam" ? 2 : 1;
    else
      error = "unknown --optimizer `" + value + "` (expected sgd or adam)";
  } else if (flag == "--precision") {
    if (value == "fp32" || value == "tf32" || value == "bf16") {
      m.precision = value == "bf16" ? Precision::Bf16 : Precision::Fp32;
      m.tf32 = value == "tf32";
    } else {
      error = "unknown --precision `" + value + "` (expected fp32, tf32 or bf16)";
    }
  } else if (flag == "--grad-precision") {
    if (value == "fp32" || value == "bf16")
      m.fp32Gradients = value == "fp32";
    else
      error = "unknown --grad-precision `" + value + "` (expected bf16 or fp32)";
  } else {
    return false;
  }
  m.given = true;
  return true;
}

const char *const kByteModelHelp =
    R"(  --hidden=H           the model's hidden size: H x H weights (default 512)
  --tokens=T           rows per micro-batch (default 256)
  --optimizer=sgd|adam SGD with momentum 0.9, lr 0.1 (default; 1 state per parameter)
                       or Adam, lr 0.001 (2 states)
  --precision=fp32|tf32|bf16  fp32 (default); tf32: fp32 values, GEMMs on TF32 tensor
                       cores (the hardware model's time; the cuda backend computes so);
                       or bf16 mixed precision: bf16 weights,
                       gradients and activations; the fp32 master weights are part of
                       the optimizer state (sharded with it), as ZeRO counts them
  --grad-precision=bf16|fp32  a bf16 run's weight gradients: bf16 (default) or fp32
                       (accumulated and reduced in fp32)
  --experts=N          every layer a mixture of N experts, each a slice of its inner
                       units (default: as many as a schedule splits a layer's experts
                       into; a layer loaded whole is then dense)
  --top-k=K            each token goes to K experts, by a fixed rule (default 1)
)";

std::string bytesText(double bytes) {
  char text[96];
  std::snprintf(text, sizeof text, "%.0f bytes (%.1f MiB)", bytes, bytes / (1 << 20));
  return text;
}

std::string gibibytes(double bytes) {
  char text[40];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / 1073741824.0);
  return text;
}

} // namespace schedc::sim
