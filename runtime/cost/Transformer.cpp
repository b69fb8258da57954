// Transformer implementation: parameters, FLOPs and activation bytes per layer, term by
// term as the header's sources count them.
#include "cost/Transformer.h"

namespace schedc::cost {

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

int64_t Transformer::blockParameters() const {
  int64_t normWeights = (norm == Norm::LayerNorm ? 2 : 1) * hidden; // weight (and bias)
  int64_t linearBiases = biases ? (2 * hidden + 2 * kvHidden()) + (gatedMlp ? 2 : 1) * ffn + hidden : 0;
  return blockMatrixParameters() + 2 * normWeights + linearBiases;
}

int64_t Transformer::layerParameters(int64_t layer) const {
  int64_t p = blockParameters();
  if (layer == 0)
    p += vocab * hidden + (positionEmbeddings ? sequence * hidden : 0);
  if (layer == layers - 1)
    p += (norm == Norm::LayerNorm ? 2 : 1) * hidden + (tiedEmbeddings ? 0 : vocab * hidden);
  return p;
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
  double tokens = d(t.sequence) * d(t.microBatch);
  return {2 * tokens * matrixParameters, 4 * d(t.microBatch) * d(t.sequence) * d(t.sequence) * d(t.hidden),
          layer == t.layers - 1 ? 2 * tokens * d(t.hidden) * d(t.vocab) : 0};
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

double Transformer::activationBytes(int64_t) const {
  const double sb = d(sequence) * d(microBatch), sbh = sb * d(hidden), kv = sb * d(kvHidden());
  const double mask = dropout ? sbh : 0; // one byte per element
  // Attention: its input, Q, K, V and the output projection's input (16-bit), the output
  // dropout's mask; the scores: softmax output, and with dropout its mask and output.
  double attention = 2 * sbh + 2 * sbh + 2 * kv + 2 * kv + 2 * sbh + mask;
  if (!flashAttention) {
    double scores = d(heads) * d(sequence) * d(sequence) * d(microBatch); // as²b
    attention += 2 * scores + (dropout ? scores + 2 * scores : 0);
  }
  // MLP: its input, the FFN-sized tensors the backward reads (the activation's input and
  // output; gated: the gate, the up projection and their product), the dropout's mask.
  double mlp = 2 * sbh + (gatedMlp ? 3 : 2) * 2 * sb * d(ffn) + mask;
  double norms = 2 * 2 * sbh; // the input of each of the two norms
  return attention + mlp + norms;
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
  return "";
}

} // namespace schedc::cost
