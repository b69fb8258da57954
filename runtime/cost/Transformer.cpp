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

int64_t Transformer::attentionMatrixParameters() const {
  if (kvLoraRank == 0)
    return 2 * hidden * hidden + 2 * hidden * kvHidden(); // Q and O; K and V
  // DeepSeek-V3's MLA (modeling_deepseek.py, DeepseekV3Attention): q_a_proj and q_b_proj (or
  // q_proj), kv_a_proj_with_mqa (the latent and the shared rotary key), kv_b_proj, o_proj.
  const int64_t qk = qkNopeHeadDim + qkRopeHeadDim;
  const int64_t query = qLoraRank > 0 ? hidden * qLoraRank + qLoraRank * heads * qk : hidden * heads * qk;
  return query + hidden * (kvLoraRank + qkRopeHeadDim) + kvLoraRank * heads * (qkNopeHeadDim + vHeadDim) +
         heads * vHeadDim * hidden;
}

double Transformer::mlpMatrixParameters(int64_t layer, bool active) const {
  if (!moeLayer(layer))
    return d((gatedMlp ? 3 : 2) * hidden * ffn);
  const double expert = d(expertParameters());
  const double routed = active ? d(topK) * capacityFactor : d(experts);
  return d(hidden * experts) + (d(sharedExperts) + routed) * expert; // the router, the experts
}

double Transformer::blockMatrixParameters(int64_t layer, bool active) const {
  return d(attentionMatrixParameters()) + mlpMatrixParameters(layer, active);
}

int64_t Transformer::replicatedMatrixParameters(int64_t layer) const {
  int64_t down = kvLoraRank > 0 ? hidden * qLoraRank + hidden * (kvLoraRank + qkRopeHeadDim) : 0;
  return down + (moeLayer(layer) ? hidden * experts : 0);
}

int64_t Transformer::routedExpertParameters(int64_t layer) const {
  return moeLayer(layer) ? experts * expertParameters() : 0;
}

int64_t Transformer::normParameters() const {
  return (norm == Norm::LayerNorm ? 2 : 1) * hidden; // weight (and bias)
}

int64_t Transformer::rowParallelBiases() const {
  return biases ? 2 * hidden : 0;
}

int64_t Transformer::blockParameters(int64_t layer) const {
  int64_t linearBiases = biases ? (2 * hidden + 2 * kvHidden()) + (gatedMlp ? 2 : 1) * ffn + hidden : 0;
  return static_cast<int64_t>(blockMatrixParameters(layer)) + 2 * normParameters() + linearBiases +
         latentNormParameters();
}

int64_t Transformer::layerParameters(int64_t layer) const {
  int64_t p = blockParameters(layer);
  if (layer == 0)
    p += vocab * hidden + (positionEmbeddings ? sequence * hidden : 0);
  if (layer == layers - 1)
    p += (norm == Norm::LayerNorm ? 2 : 1) * hidden + (tiedEmbeddings ? 0 : vocab * hidden);
  return p;
}

double Transformer::rankParameters(int64_t layer) const {
  // What every rank holds whole: the norms, the row-parallel biases, learned positions, the
  // replicated matrices (MLA's down projections and latent norms, a router).
  double whole =
      d(2 * normParameters() + rowParallelBiases() + replicatedMatrixParameters(layer) + latentNormParameters());
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

int64_t Transformer::activeParameters() const {
  int64_t total = 0;
  for (int64_t l = 0; l < layers; ++l)
    total += layerParameters(l) - routedExpertParameters(l) + (moeLayer(l) ? topK * expertParameters() : 0);
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
  // Under tensor parallelism each rank does 1/t of each (but the replicated matrices whole).
  double tokens = d(t.sequence) * d(t.microBatch), share = d(t.tensorParallel);
  double replicated = d(t.replicatedMatrixParameters(layer));
  return {2 * tokens * ((matrixParameters - replicated) / share + replicated), t.attentionCoreFlops(),
          layer == t.layers - 1 ? 2 * tokens * d(t.hidden) * d(t.vocab) / share : 0};
}
} // namespace

double Transformer::attentionCoreFlops() const {
  return 2 * d(microBatch) * d(sequence) * d(sequence) * d(heads) * d(qkHeadDim() + valueHeadDim()) / d(tensorParallel);
}

double Transformer::routedFlops(int64_t layer) const {
  if (!moeLayer(layer))
    return 0;
  return 2 * d(sequence) * d(microBatch) * dispatchFactor() * d(expertParameters()) / d(tensorParallel);
}

double Transformer::routedActivationBytes(int64_t layer) const {
  if (!moeLayer(layer))
    return 0;
  // Each copy of a token at its expert, 16-bit: its input (h), and the gate, the up
  // projection and their product (3 x expert_ffn) the expert's backward reads — under full
  // recomputation only the input (the rest is made again).
  const double sb = d(sequence) * d(microBatch);
  const double kept = recompute == Recompute::Full ? 2 * d(hidden) : 2 * d(hidden) + 3 * 2 * d(expertFfn);
  return dispatchFactor() * sb * kept / d(tensorParallel);
}

double Transformer::forwardFlops(int64_t layer) const {
  Passes p = passesOf(*this, layer, blockMatrixParameters(layer, true));
  return p.gemms + p.attention + p.logits;
}

// The gradient of each GEMM's input is one more GEMM of its size; attention's backward is
// twice its forward, all of it on the input side.
double Transformer::backwardInputFlops(int64_t layer) const {
  Passes p = passesOf(*this, layer, blockMatrixParameters(layer, true));
  return p.gemms + 2 * p.attention + p.logits;
}

// The gradient of each weight: one more GEMM of its size.
double Transformer::backwardWeightFlops(int64_t layer) const {
  Passes p = passesOf(*this, layer, blockMatrixParameters(layer, true));
  return p.gemms + p.logits;
}

double Transformer::recomputeFlops(int64_t layer) const {
  double attentionCore = attentionCoreFlops();
  switch (recompute) {
  case Recompute::Full: { // and FlashAttention's backward makes QKᵀ again besides
    Passes p = passesOf(*this, layer, blockMatrixParameters(layer, true));
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

double Transformer::partActivationBytes(int64_t layer, int64_t parts, bool sequenceSplit) const {
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
  if (kvLoraRank > 0) { // MLA: the heads' Q and K (qk wide), V and the output's input (v wide),
    // and (whole on every rank) the query and key-value latents the projections read
    const double qk = sb * d(heads * qkHeadDim()), v = sb * d(heads * valueHeadDim());
    split = 2 * qk + 2 * qk + 2 * v + 2 * v;
    whole += 2 * sb * d(qLoraRank + kvLoraRank + qkRopeHeadDim);
  }
  if (keepsScores()) {
    double scores = d(heads) * d(sequence) * d(sequence) * d(microBatch); // as²b
    split += 2 * scores + (dropout ? scores + 2 * scores : 0);
  }
  if (!moeLayer(layer))
    return (sequenceSplit ? whole / t : whole) + (split + (gatedMlp ? 3 : 2) * 2 * sb * d(ffn)) / t;
  // A mixture-of-experts layer: the router's fp32 probabilities (sb x experts, whole), the
  // shared experts' gated MLPs, and the routed experts' share (routedActivationBytes).
  whole += 4 * sb * d(experts);
  split += d(sharedExperts) * 3 * 2 * sb * d(expertFfn);
  return (sequenceSplit ? whole / t : whole) + split / t + routedActivationBytes(layer) * d(tensorParallel) / t;
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
  for (Field f :
       {Field{"experts", experts}, Field{"top_k", topK}, Field{"expert_ffn", expertFfn},
        Field{"shared_experts", sharedExperts}, Field{"dense_layers", denseLayers}, Field{"q_lora_rank", qLoraRank},
        Field{"kv_lora_rank", kvLoraRank}, Field{"qk_nope_head_dim", qkNopeHeadDim},
        Field{"qk_rope_head_dim", qkRopeHeadDim}, Field{"v_head_dim", vHeadDim}})
    if (f.value < 0)
      return std::string(f.name) + " is " + std::to_string(f.value) + "; it must be at least 0";
  if (experts > 0 && (topK < 1 || topK > experts))
    return "top_k is " + std::to_string(topK) + "; a token goes to 1 to experts (" + std::to_string(experts) +
           ") routed experts";
  if (experts > 0 && expertFfn < 1)
    return "expert_ffn is 0; a model with experts gives each one's inner size";
  if (experts == 0 && (topK > 0 || sharedExperts > 0 || expertFfn > 0))
    return "top_k, shared_experts and expert_ffn describe experts, but experts is 0";
  if (experts > 0 && denseLayers >= layers)
    return "dense_layers (" + std::to_string(denseLayers) + ") leaves no layer of the " + std::to_string(layers) +
           " with experts";
  if (!(capacityFactor >= 1) || capacityFactor > 64)
    return "capacity_factor is " + std::to_string(capacityFactor) +
           "; it is at least 1 (each expert's buffer holds its balanced share) and at most 64";
  if (experts > 0 && expertFfn % tensorParallel != 0)
    return "tensor_parallel (" + std::to_string(tensorParallel) + ") must divide expert_ffn (" +
           std::to_string(expertFfn) + "): each rank holds an equal share of every expert";
  if (kvLoraRank > 0 && (qkNopeHeadDim < 1 || qkRopeHeadDim < 1 || vHeadDim < 1))
    return "kv_lora_rank describes multi-head latent attention: qk_nope_head_dim, qk_rope_head_dim and v_head_dim "
           "must be at least 1";
  for (Field f : {Field{"kv_heads", kvHeads}, Field{"ffn", ffn}})
    if (f.value % tensorParallel != 0)
      return "tensor_parallel (" + std::to_string(tensorParallel) + ") must divide " + f.name + " (" +
             std::to_string(f.value) + "): each rank holds whole heads and an equal share of the FFN";
  return "";
}

} // namespace schedc::cost
