// The kernels of a transformer layer's passes (cost/Kernels.h), per micro-batch on one rank
// of t' = tensor_parallel x parts sharing the layer; T = s·b tokens. Megatron-LM's GPT
// layer as NVIDIA/Megatron-LM runs it (megatron/model/transformer.py ParallelAttention,
// ParallelMLP, ParallelTransformerLayer; the fused kernels of megatron/model/fused_softmax.py
// FusedScaleMaskSoftmax, fused_bias_gelu.py and the bias-dropout-add of transformer.py);
// Llama's RMSNorm, rotary embedding and SwiGLU likewise:
//   GEMMs (forward)  Q, K, V: T x (h + 2·kv)/t' x h; attention's output projection
//                    T x h x h/t'; the MLP's first matrices T x f/t' x h (gated: two); its
//                    last T x h x f/t'; the last layer's logits T x V/t' x h. Without
//                    FlashAttention, the scores QKᵀ and their product with V as batched
//                    GEMMs, b·a/t' of s x s x h/a and s x h/a x s
//   backward         every GEMM's input gradient (dX = dY Wᵀ, the same FLOPs) and, in the
//                    weight half, its weight gradient (dW = Xᵀ dY: K x N x T); attention's
//                    four batched products (dP, dV, dQ, dK)
//   FlashAttention   one kernel (Dao 2023, "FlashAttention-2", §3): forward 4·b·s²·h/t'
//                    FLOPs, backward 2.5 times that (it makes the scores again: five
//                    products to the forward's two), half of each under the causal mask
//                    (the blocks above the diagonal are skipped)
//   memory-bound     bytes read + written, e bytes an activation element: each norm reads
//                    and writes its input (2e per element; backward 3e: x, dy, dx); the
//                    rotary embedding rewrites Q and K; softmax reads the scores and writes
//                    the probabilities (backward: P, dP, dS) and dropout keeps a 1-byte mask
//                    (e + e + 1); each residual branch's bias-dropout-add reads the branch
//                    and the residual and writes their sum (3e, and the mask); the GeLU
//                    reads and writes the f/t' activation (SwiGLU: reads gate and up, writes
//                    their product; backward reads both and dy, writes both gradients);
//                    the last layer's cross-entropy converts the V/t' logits to fp32 and
//                    makes the softmax in five fp32 passes (megatron/mpu/cross_entropy.py,
//                    _VocabParallelCrossEntropy), e + 36 bytes a logit, and its backward
//                    reads the softmax and writes the gradient (12 + e); the first layer's
//                    embedding gathers T rows (2e per element). Norms, residual adds and
//                    dropout run on T/t' tokens with sequence parallelism
//   weight gradients each micro-batch's gradient is added to the accumulated one (Megatron's
//                    main_grad): read the new one (e) and the sum, write the sum (g each)
//   recomputation    full: the block's forward first (its kernels above) in the backward and
//                    its input half; selective: attention's core forward first (FlashAttention
//                    makes the scores again inside its backward kernel)
// Not counted: bias gradients (a reduction over T of each bias), the norms' weight
// gradients, kernel launch gaps.
#include "cost/Transformer.h"

namespace schedc::cost {

namespace {

double d(int64_t v) {
  return static_cast<double>(v);
}

// One linear layer: T x n x k in the forward.
struct Linear {
  const char *name;
  double n, k;
};

} // namespace

void Transformer::kernels(int64_t layer, Pass pass, LayerShare share, const ElementSizes &size, KernelList &out) const {
  const int64_t parts = share.parts;
  const double t = d(tensorParallel * parts), tokens = d(sequence) * d(microBatch), h = d(hidden);
  const double e = size.activation, f = d(ffn) / t;
  // Elements of the norms' and residuals' tensors: 1/t of the sequence's under sequence
  // parallelism (the model's, or the schedule's own: then 1/parts of this rank's).
  const double whole = tokens * h / (sequenceParallel ? d(tensorParallel) : 1) / (share.sequence ? d(parts) : 1);
  const double heads = d(this->heads) / t, headSize = h / d(this->heads), s = d(sequence);
  const double scores = d(microBatch) * heads * s * s; // elements of QKᵀ on this rank
  const bool last = layer == layers - 1;

  std::vector<Linear> linears{{"qkv", (h + 2 * d(kvHidden())) / t, h},
                              {"attention output", h, h / t},
                              {gatedMlp ? "mlp gate and up" : "mlp up", (gatedMlp ? 2 : 1) * f, h},
                              {"mlp down", h, f}};
  if (last)
    linears.push_back({"logits", d(vocab) / t, h});
  const double residualBytes = whole * (3 * e + (dropout ? 1 : 0));
  const double causal = 0.5;
  const double attentionFlops = 4 * scores * headSize; // QKᵀ and PV: 4·b·s²·h/t'

  // Attention's core forward: FlashAttention's one kernel, or the scores, softmax, dropout
  // and the product with V.
  auto attentionCore = [&] {
    if (flashAttention) {
      out.push_back(
          Kernel::attention("flash attention", d(microBatch) * heads, s, s, headSize, causal * attentionFlops));
      return;
    }
    out.push_back(Kernel::gemm("attention scores", d(microBatch) * heads, s, s, headSize));
    out.push_back(Kernel::memory("softmax", 2 * scores * e, scores));
    if (dropout)
      out.push_back(Kernel::memory("attention dropout", scores * (2 * e + 1), scores));
    out.push_back(Kernel::gemm("attention values", d(microBatch) * heads, s, headSize, s));
  };
  // The block's forward (what full recomputation runs again): not the embedding, the
  // logits or the loss.
  auto block = [&] {
    for (size_t i = 0; i < 4; ++i)
      out.push_back(Kernel::gemm(linears[i].name, 1, tokens, linears[i].n, linears[i].k));
    out.push_back(Kernel::memory("norm", 2 * whole * e, whole));
    out.push_back(Kernel::memory("norm", 2 * whole * e, whole));
    if (!positionEmbeddings) // rotary: Q and K rewritten
      out.push_back(
          Kernel::memory("rotary", 2 * tokens * (h + d(kvHidden())) / t * e, tokens * (h + d(kvHidden())) / t));
    attentionCore();
    out.push_back(Kernel::memory("residual", residualBytes, whole));
    out.push_back(Kernel::memory("residual", residualBytes, whole));
    out.push_back(Kernel::memory(gatedMlp ? "swiglu" : "gelu", (gatedMlp ? 3 : 2) * tokens * f * e, tokens * f));
  };

  switch (pass) {
  case Pass::Loss: return; // the last layer's forward makes the loss, and its backward the gradient
  case Pass::Backward:     // both halves
    kernels(layer, Pass::BackwardInput, share, size, out);
    kernels(layer, Pass::BackwardWeight, share, size, out);
    return;
  case Pass::Forward:
    if (layer == 0)
      out.push_back(Kernel::memory("embedding", 2 * tokens * h * e, tokens * h));
    block();
    if (last) {
      out.push_back(Kernel::gemm("logits", 1, tokens, d(vocab) / t, h));
      out.push_back(Kernel::memory("final norm", 2 * whole * e, whole));
      out.push_back(Kernel::memory("cross-entropy", tokens * d(vocab) / t * (e + 36), tokens * d(vocab) / t));
    }
    return;
  case Pass::BackwardInput:
    if (recompute == Recompute::Full)
      block();
    else if (recompute == Recompute::Selective && !flashAttention)
      attentionCore();
    for (const Linear &l : linears)
      out.push_back(Kernel::gemm(l.name, 1, tokens, l.k, l.n));
    out.push_back(Kernel::memory("norm backward", 3 * whole * e, whole));
    out.push_back(Kernel::memory("norm backward", 3 * whole * e, whole));
    if (!positionEmbeddings)
      out.push_back(Kernel::memory("rotary backward", 2 * tokens * (h + d(kvHidden())) / t * e,
                                   tokens * (h + d(kvHidden())) / t));
    if (flashAttention) {
      out.push_back(Kernel::attention("flash attention backward", d(microBatch) * heads, s, s, headSize,
                                      causal * 2.5 * attentionFlops));
    } else {
      out.push_back(Kernel::gemm("attention dP", d(microBatch) * heads, s, s, headSize));
      out.push_back(Kernel::gemm("attention dV", d(microBatch) * heads, s, headSize, s));
      out.push_back(Kernel::gemm("attention dQ", d(microBatch) * heads, s, headSize, s));
      out.push_back(Kernel::gemm("attention dK", d(microBatch) * heads, s, headSize, s));
      out.push_back(Kernel::memory("softmax backward", 3 * scores * e, scores));
      if (dropout)
        out.push_back(Kernel::memory("attention dropout backward", scores * (2 * e + 1), scores));
    }
    for (int branch = 0; branch < 2; ++branch) // the branch's dropout, and the two gradients summed
      out.push_back(Kernel::memory("residual backward", whole * (3 * e + (dropout ? 2 * e + 1 : 0)), whole));
    out.push_back(Kernel::memory(gatedMlp ? "swiglu backward" : "gelu backward", (gatedMlp ? 5 : 3) * tokens * f * e,
                                 tokens * f));
    if (last) {
      out.push_back(Kernel::memory("final norm backward", 3 * whole * e, whole));
      out.push_back(Kernel::memory("cross-entropy backward", tokens * d(vocab) / t * (12 + e), tokens * d(vocab) / t));
    }
    return;
  case Pass::BackwardWeight: {
    for (const Linear &l : linears)
      out.push_back(Kernel::gemm(l.name, 1, l.k, l.n, tokens));
    double parameters = rankParameters(layer) / d(parts);
    double g = mainGradBuffer ? 4 : size.gradient; // Megatron's main_grad is fp32
    out.push_back(Kernel::memory("gradient accumulation", parameters * (e + 2 * g), parameters));
    return;
  }
  }
}

} // namespace schedc::cost
