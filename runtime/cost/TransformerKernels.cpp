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
//   MLA              (DeepSeek-V3's attention) q down T x q_lora x h (whole on every rank), q up
//                    T x a·qk/t' x q_lora, kv down T x (kv_lora + rope) x h (whole), kv up
//                    T x a·(nope + v)/t' x kv_lora, the output T x h x a·v/t'; the core with
//                    qk-wide keys and v-wide values
//   experts          a mixture-of-experts layer's MLP: the router T x experts x h (whole),
//                    the shared experts' gated MLP, and the routed experts as grouped GEMMs
//                    (Megatron-LM's --moe-grouped-gemm): on a rank holding E' of the E
//                    experts, E' products of T·k·c/E tokens each (balanced routing, capacity
//                    factor c); the permutation that copies each token to its k experts'
//                    buffers and the weighted sum that brings their outputs back (each reads
//                    and writes T·k·c·h elements)
//   sides            a layer split around its all-to-alls: the dense part is everything but
//                    the routed experts (their GEMMs and SwiGLU), the experts' side those on
//                    E' = E / dispatch experts of its group's tokens, all the event's
//                    micro-batches' at once (m = micro-batches · T·k·c/E)
// Not counted: bias gradients (a reduction over T of each bias), the norms' weight
// gradients, kernel launch gaps, the router's softmax and top-k.
#include "cost/Transformer.h"

namespace schedc::cost {

namespace {

double d(int64_t v) {
  return static_cast<double>(v);
}

// One linear layer: `batch` products of m x n x k in the forward (m: the tokens, or an
// expert's share of them).
struct Linear {
  const char *name;
  double n, k;
  double batch = 1, m = 0;
};

} // namespace

void Transformer::kernels(int64_t layer, Pass pass, LayerShare share, const ElementSizes &size, KernelList &out) const {
  const int64_t parts = share.parts;
  const double t = d(tensorParallel * parts), tokens = d(sequence) * d(microBatch), h = d(hidden);
  const double e = size.activation, f = d(ffn) / t;
  // Elements of the norms' and residuals' tensors: 1/t of the sequence's under sequence
  // parallelism (the model's, or the schedule's own: then 1/parts of this rank's).
  const double whole = tokens * h / (sequenceParallel ? d(tensorParallel) : 1) / (share.sequence ? d(parts) : 1);
  const double heads = d(this->heads) / t, s = d(sequence);
  const double scores = d(microBatch) * heads * s * s; // elements of QKᵀ on this rank
  const bool last = layer == layers - 1;

  const bool moe = moeLayer(layer), dense = share.half != LayerHalf::Experts;
  const bool routed = moe && share.half != LayerHalf::Dense; // this pass computes routed experts
  const double qk = d(qkHeadDim()), v = d(valueHeadDim());
  // Tokens a routed expert computes (balanced), and the experts this rank holds.
  const double expertTokens = tokens * dispatchFactor() / d(std::max<int64_t>(experts, 1)) *
                              d(share.half == LayerHalf::Experts ? share.microBatches : 1);
  const double localExperts = d(experts) / d(share.half == LayerHalf::Experts ? share.dispatch : 1);
  const double fe = d(expertFfn) / t, permuted = tokens * dispatchFactor() * h;
  std::vector<Linear> linears; // the block's, then the logits
  if (dense && kvLoraRank > 0) {
    if (qLoraRank > 0) // (else q up is q_proj, from the input)
      linears.push_back({"q down", d(qLoraRank), h});
    linears.push_back({"q up", d(heads) * qk / t, qLoraRank > 0 ? d(qLoraRank) : h});
    linears.push_back({"kv down", d(kvLoraRank + qkRopeHeadDim), h});
    linears.push_back({"kv up", d(heads) * (d(qkNopeHeadDim) + v) / t, d(kvLoraRank)});
    linears.push_back({"attention output", h, d(heads) * v / t});
  } else if (dense) {
    linears.push_back({"qkv", (h + 2 * d(kvHidden())) / t, h});
    linears.push_back({"attention output", h, h / t});
  }
  if (dense && !moe) {
    linears.push_back({gatedMlp ? "mlp gate and up" : "mlp up", (gatedMlp ? 2 : 1) * f, h});
    linears.push_back({"mlp down", h, f});
  } else if (dense) {
    linears.push_back({"router", d(experts), h});
    if (sharedExperts > 0) {
      linears.push_back({"shared experts gate and up", 2 * d(sharedExperts) * fe, h});
      linears.push_back({"shared experts down", h, d(sharedExperts) * fe});
    }
  }
  if (routed) {
    linears.push_back({"experts gate and up", 2 * fe, h, localExperts, expertTokens});
    linears.push_back({"experts down", h, fe, localExperts, expertTokens});
  }
  for (Linear &l : linears)
    if (l.m == 0)
      l.m = tokens;
  const size_t blockLinears = linears.size();
  if (last && dense)
    linears.push_back({"logits", d(vocab) / t, h, 1, tokens});
  const double residualBytes = whole * (3 * e + (dropout ? 1 : 0));
  const double causal = 0.5;
  const double attentionFlops = 2 * scores * (qk + v); // QKᵀ and PV: 4·b·s²·h/t' (MHA)
  // The rotary embedding's elements: Q's and K's (MLA: the queries' rotary part and the one
  // shared key's).
  const double rotary = kvLoraRank > 0 ? tokens * d(qkRopeHeadDim) * (heads + 1) : tokens * (h + d(kvHidden())) / t;
  // The MLP's element-wise work: the dense gated MLP's (or GeLU's), or a mixture-of-experts
  // layer's shared experts' SwiGLU on every token and its routed experts' on their tokens.
  const double activated =
      !moe ? (dense ? tokens * f : 0)
           : (dense ? tokens * d(sharedExperts) * fe : 0) + (routed ? localExperts * expertTokens * fe : 0);

  // Attention's core forward: FlashAttention's one kernel, or the scores, softmax, dropout
  // and the product with V.
  auto attentionCore = [&] {
    if (flashAttention) {
      out.push_back(Kernel::attention("flash attention", d(microBatch) * heads, s, s, qk, causal * attentionFlops));
      return;
    }
    out.push_back(Kernel::gemm("attention scores", d(microBatch) * heads, s, s, qk));
    out.push_back(Kernel::memory("softmax", 2 * scores * e, scores));
    if (dropout)
      out.push_back(Kernel::memory("attention dropout", scores * (2 * e + 1), scores));
    out.push_back(Kernel::gemm("attention values", d(microBatch) * heads, s, v, s));
  };
  // The block's forward (what full recomputation runs again): not the embedding, the
  // logits or the loss.
  auto block = [&] {
    for (size_t i = 0; i < blockLinears; ++i)
      out.push_back(Kernel::gemm(linears[i].name, linears[i].batch, linears[i].m, linears[i].n, linears[i].k));
    if (dense) {
      out.push_back(Kernel::memory("norm", 2 * whole * e, whole));
      out.push_back(Kernel::memory("norm", 2 * whole * e, whole));
      if (!positionEmbeddings) // rotary: Q and K rewritten
        out.push_back(Kernel::memory("rotary", 2 * rotary * e, rotary));
      attentionCore();
      out.push_back(Kernel::memory("residual", residualBytes, whole));
      out.push_back(Kernel::memory("residual", residualBytes, whole));
    }
    if (dense && moe) { // each token copied to its experts' buffers, and their outputs summed back
      out.push_back(Kernel::memory("permute", 2 * permuted * e, permuted));
      out.push_back(Kernel::memory("unpermute", 2 * permuted * e, tokens * h));
    }
    if (activated > 0)
      out.push_back(Kernel::memory(gatedMlp ? "swiglu" : "gelu", (gatedMlp ? 3 : 2) * activated * e, activated));
  };

  switch (pass) {
  case Pass::Loss: return; // the last layer's forward makes the loss, and its backward the gradient
  case Pass::Backward:     // both halves
    kernels(layer, Pass::BackwardInput, share, size, out);
    kernels(layer, Pass::BackwardWeight, share, size, out);
    return;
  case Pass::Forward:
    if (layer == 0 && dense)
      out.push_back(Kernel::memory("embedding", 2 * tokens * h * e, tokens * h));
    block();
    if (last && dense) {
      out.push_back(Kernel::gemm("logits", 1, tokens, d(vocab) / t, h));
      out.push_back(Kernel::memory("final norm", 2 * whole * e, whole));
      out.push_back(Kernel::memory("cross-entropy", tokens * d(vocab) / t * (e + 36), tokens * d(vocab) / t));
    }
    return;
  case Pass::BackwardInput:
    if (recompute == Recompute::Full)
      block();
    else if (recompute == Recompute::Selective && !flashAttention && dense)
      attentionCore();
    for (const Linear &l : linears)
      out.push_back(Kernel::gemm(l.name, l.batch, l.m, l.k, l.n));
    if (dense) {
      out.push_back(Kernel::memory("norm backward", 3 * whole * e, whole));
      out.push_back(Kernel::memory("norm backward", 3 * whole * e, whole));
      if (!positionEmbeddings)
        out.push_back(Kernel::memory("rotary backward", 2 * rotary * e, rotary));
      if (flashAttention) {
        out.push_back(Kernel::attention("flash attention backward", d(microBatch) * heads, s, s, qk,
                                        causal * 2.5 * attentionFlops));
      } else {
        out.push_back(Kernel::gemm("attention dP", d(microBatch) * heads, s, s, v));
        out.push_back(Kernel::gemm("attention dV", d(microBatch) * heads, s, v, s));
        out.push_back(Kernel::gemm("attention dQ", d(microBatch) * heads, s, qk, s));
        out.push_back(Kernel::gemm("attention dK", d(microBatch) * heads, s, qk, s));
        out.push_back(Kernel::memory("softmax backward", 3 * scores * e, scores));
        if (dropout)
          out.push_back(Kernel::memory("attention dropout backward", scores * (2 * e + 1), scores));
      }
      for (int branch = 0; branch < 2; ++branch) // the branch's dropout, and the two gradients summed
        out.push_back(Kernel::memory("residual backward", whole * (3 * e + (dropout ? 2 * e + 1 : 0)), whole));
    }
    if (dense && moe) {
      out.push_back(Kernel::memory("permute backward", 2 * permuted * e, tokens * h));
      out.push_back(Kernel::memory("unpermute backward", 2 * permuted * e, permuted));
    }
    if (activated > 0)
      out.push_back(Kernel::memory(gatedMlp ? "swiglu backward" : "gelu backward", (gatedMlp ? 5 : 3) * activated * e,
                                   activated));
    if (last && dense) {
      out.push_back(Kernel::memory("final norm backward", 3 * whole * e, whole));
      out.push_back(Kernel::memory("cross-entropy backward", tokens * d(vocab) / t * (12 + e), tokens * d(vocab) / t));
    }
    return;
  case Pass::BackwardWeight: {
    for (const Linear &l : linears)
      out.push_back(Kernel::gemm(l.name, l.batch, l.k, l.n, l.m));
    // The side's own parameters: the layer's, without its routed experts (the dense part), or
    // this rank's slice of them.
    const double routedHere = rankRoutedParameters(layer) / (share.half == LayerHalf::Experts ? d(share.dispatch) : 1);
    double parameters = (share.half == LayerHalf::Whole   ? rankParameters(layer)
                         : share.half == LayerHalf::Dense ? rankParameters(layer) - routedHere
                                                          : routedHere) /
                        d(parts);
    double g = mainGradBuffer ? 4 : size.gradient; // Megatron's main_grad is fp32
    out.push_back(Kernel::memory("gradient accumulation", parameters * (e + 2 * g), parameters));
    return;
  }
  }
}

} // namespace schedc::cost
