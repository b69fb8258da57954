// Transformer implementation: parameters, FLOPs and activation bytes per layer, term by
// term as the header's sources count them.
#include "cost/Transformer.h"
#include "diagnostics/InternalError.h"

namespace schedc::cost {

const char *recomputeName(Recompute recompute) {
  switch (recompute) {
  case Recompute::None: return "none";
  case Recompute::Selective: return "selective";
  case Recompute::Full: return "full";
  }
  SCHEDC_UNREACHABLE("a recomputation without its name");
}

namespace {

double d(int64_t v) {
  return static_cast<double>(v);
}

} // namespace

int64_t Transformer::blockMatrixParameters() const {
  int64_t attention = 2 * hidden * hidden + 2 * hidden * kvHidden(); // Q and O; K and V
  int64_t mlp = (gatedMlp ? 3 : 2) * hidden * ffn;
  return attention + mlp;
}

int64_t Transformer::normParameters() const {
  return (norm == Norm::LayerNorm ? 2 : 1) * hidden; // weight (and bias)
}

int64_t Transformer::rowParallelBiases() const {
  return biases ? 2 * hidden : 0;
}

int64_t Transformer::blockParameters() const {
  int64_t linearBiases = biases ? (2 * hidden + 2 * kvHidden()) + (gatedMlp ? 2 : 1) * ffn + hidden : 0;
  return blockMatrixParameters() + 2 * normParameters() + linearBiases;
}

int64_t Transformer::layerParameters(int64_t layer) const {
  int64_t p = blockParameters();
  if (layer == 0)
    p += vocab * hidden + (positionEmbeddings ? sequence * hidden : 0);
  if (layer == layers - 1)
    p += (norm == Norm::LayerNorm ? 2 : 1) * hidden + (tiedEmbeddings ? 0 : vocab * hidden);
  return p;
}

double Transformer::rankParameters(int64_t layer) const {
  // What every rank holds whole: the norms, the row-parallel biases, learned positions.
  double whole = d(2 * normParameters() + rowParallelBiases());
  if (layer == 0 && positionEmbeddings)
    whole += d(sequence * hidden);
  if (layer == layers - 1)
    whole += d(normParameters());
  return whole + (d(layerParameters(layer)) - whole) / d(tensorParallel);
}

double Transformer::boundaryElements() const {
  double sbh = d(sequence) * d(microBatch) * d(hidden);
  return sequenceParallel ? sbh / d(tensorParallel) : sbh;
}

int64_t Transformer::parameters() const {
  int64_t total = 0;
  for (int64_t l = 0; l < layers; ++l)
    total += layerParameters(l);
  return total;
}

// The three passes over a layer, in units of its parts: one pass of every GEMM (2 FLOPs
// per matrix parameter per token), attention's score and value products (4bs²h), and the
// last layer's logits (2bshV).
namespace {
struct Passes {
  double gemms, attention, logits;
};
Passes passesOf(const Transformer &t, int64_t layer, double matrixParameters) {
  // Under tensor parallelism each rank does 1/t of each.
  double tokens = d(t.sequence) * d(t.microBatch), share = d(t.tensorParallel);
  return {2 * tokens * matrixParameters / share,
          4 * d(t.microBatch) * d(t.sequence) * d(t.sequence) * d(t.hidden) / share,
          layer == t.layers - 1 ? 2 * tokens * d(t.hidden) * d(t.vocab) / share : 0};
}
} // namespace

double Transformer::forwardFlops(int64_t layer) const {
  Passes p = passesOf(*this, layer, d(blockMatrixParameters()));
  return p.gemms + p.attention + p.logits;
}

// The gradient of each GEMM's input is one more GEMM of its size; attention's backward is
// twice its forward, all of it on the input side.
double Transformer::backwardInputFlops(int64_t layer) const {
  Passes p = passesOf(*this, layer, d(blockMatrixParameters()));
  return p.gemms + 2 * p.attention + p.logits;
}

// The gradient of each weight: one more GEMM of its size.
double Transformer::backwardWeightFlops(int64_t layer) const {
  Passes p = passesOf(*this, layer, d(blockMatrixParameters()));
  return p.gemms + p.logits;
}

double Transformer::recomputeFlops(int64_t layer) const {
  double attentionCore = 4 * d(microBatch) * d(sequence) * d(sequence) * d(hidden) / d(tensorParallel);
  switch (recompute) {
  case Recompute::Full: { // and FlashAttention's backward makes QKᵀ again besides
    Passes p = passesOf(*this, layer, d(blockMatrixParameters()));
    return p.gemms + p.attention + (flashAttention ? attentionCore / 2 : 0);
  }
  case Recompute::Selective: return flashAttention ? attentionCore / 2 : attentionCore;
  case Recompute::None: return flashAttention ? attentionCore / 2 : 0;
  }
  return 0;
}

double Transformer::activationBytes(int64_t layer) const {
  return partActivationBytes(layer, tensorParallel, sequenceParallel);
}

double Transformer::partActivationBytes(int64_t, int64_t parts, bool sequenceSplit) const {
  const double sb = d(sequence) * d(microBatch), sbh = sb * d(hidden), kv = sb * d(kvHidden());
  const double t = d(parts);
  if (recompute == Recompute::Full) // the layer's input, its checkpoint (16-bit)
    return sequenceSplit ? 2 * sbh / t : 2 * sbh;
  const double mask = dropout ? sbh : 0; // one byte per element
  // Whole on every rank of a tensor-parallel group (split along the sequence with sequence
  // parallelism): the input of each norm, of attention and of the MLP (16-bit), and the two
  // dropout masks after them.
  double whole = 2 * 2 * sbh + 2 * sbh + 2 * sbh + 2 * mask;
  // Split among the group by heads or by the FFN's columns: Q, K, V and the output
  // projection's input; the scores (softmax output, and with dropout its mask and output);
  // the FFN-sized tensors the backward reads (the activation's input and output; gated: the
  // gate, the up projection and their product).
  double split = 2 * sbh + 2 * kv + 2 * kv + 2 * sbh;
  if (keepsScores()) {
    double scores = d(heads) * d(sequence) * d(sequence) * d(microBatch); // as²b
    split += 2 * scores + (dropout ? scores + 2 * scores : 0);
  }
  split += (gatedMlp ? 3 : 2) * 2 * sb * d(ffn);
  return (sequenceSplit ? whole / t : whole) + split / t;
}

std::string Transformer::invalid() const {
  struct Field {
    const char *name;
    int64_t value;
  };
  for (Field f :
       {Field{"layers", layers}, Field{"hidden", hidden}, Field{"heads", heads}, Field{"kv_heads", kvHeads},
        Field{"ffn", ffn}, Field{"vocab", vocab}, Field{"sequence", sequence}, Field{"micro_batch", microBatch}})
    if (f.value < 1)
      return std::string(f.name) + " is " + std::to_string(f.value) + "; it must be at least 1";
  if (hidden % heads != 0)
    return "heads (" + std::to_string(heads) + ") must divide hidden (" + std::to_string(hidden) + ")";
  if (heads % kvHeads != 0)
    return "kv_heads (" + std::to_string(kvHeads) + ") must divide heads (" + std::to_string(heads) + ")";
  if (tensorParallel < 1)
    return "tensor_parallel is " + std::to_string(tensorParallel) + "; it must be at least 1";
  for (Field f : {Field{"kv_heads", kvHeads}, Field{"ffn", ffn}})
    if (f.value % tensorParallel != 0)
      return "tensor_parallel (" + std::to_string(tensorParallel) + ") must divide " + f.name + " (" +
             std::to_string(f.value) + "): each rank holds whole heads and an equal share of the FFN";
  return "";
}

} // namespace schedc::cost
