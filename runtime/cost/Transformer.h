// Transformer — a decoder-only transformer as the time and byte layers see it: its shape
// (layers, hidden size, heads and KV heads, FFN size, vocabulary), one micro-batch's shape
// (sequence length, micro-batch size) and its training precision and optimizer; and, per
// layer, what that shape implies:
//   parameters       attention Q, K, V, O (K and V of kvHeads heads: grouped-query
//                    attention), the MLP's two matrices (three when gated, as SwiGLU), the
//                    norms' weights, biases where the model has them; the first layer also
//                    holds the token (and learned position) embeddings, the last the final
//                    norm and the output layer (none when it is tied to the embedding)
//   FLOPs            one multiply-add = 2 FLOPs. Forward: 2·s·b per matrix parameter, plus
//                    attention's 4·b·s²·h (QKᵀ and the weighted sum of V; Narayanan et al.
//                    2021, "Efficient Large-Scale Language Model Training on GPU Clusters
//                    Using Megatron-LM", §5.1: 24bsh² + 4bs²h per GPT layer); backward twice
//                    forward, split into its input half (every GEMM once more, attention's
//                    twice) and its weight half (every GEMM once more); the last layer's
//                    logits 2·b·s·h·V forward
//   activation bytes what a layer keeps for its backward, per micro-batch, by Korthikanti et
//                    al. 2022 ("Reducing Activation Recomputation in Large Transformer
//                    Models", §4.1), 16-bit: sbh(34 + 5as/h) for a GPT layer — attention
//                    11sbh + 5as²b, MLP 19sbh, two LayerNorms 4sbh; without the 5as²b of
//                    the attention scores when they are recomputed inside the kernel
//                    (FlashAttention; Korthikanti's selective recomputation). The same terms,
//                    each a tensor the backward reads, are taken for grouped-query attention
//                    (K and V of kvHeads heads), another FFN size, a gated MLP (the gate, the
//                    up projection and their product) and no dropout (no masks).
// Tensor parallelism (Megatron-LM; Shoeybi et al. 2019): with tensor_parallel = t every
// rank is one of t accelerators sharing each layer — Q, K, V and the MLP's first matrices
// split by columns, O and the MLP's last matrix by rows, attention heads split among them,
// the embedding and the output layer split by vocabulary; norms, row-parallel biases and
// learned position embeddings replicated. Per rank then: 1/t of the matrices' parameters
// and of every FLOP; activation bytes by Korthikanti et al. 2022, Table 2: sbh(10 + 24/t +
// 5as/(ht)) for a GPT layer (the norms' and the blocks' inputs and the dropout masks, 10sbh,
// are whole on every rank), and with sequence_parallel, (sbh/t)(34 + 5as/h) (those run on
// 1/t of the sequence); without the 5as/h term when the scores are recomputed (selective
// recomputation, FlashAttention). The tensor-parallel collectives of a layer — 2 all-reduces
// of sbh in the forward and 2 in the backward's input half (Megatron's f and g operators),
// or with sequence parallelism an all-gather and a reduce-scatter for each — are on the
// critical path of its compute (cost/HardwareCost.h).
// The kernels of each pass, and how they are timed: TransformerKernels.cpp.
// Presets with the sources of their numbers: TransformerPresets.cpp.
#pragma once

#include "cost/Kernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedc::cost {

enum class Norm : uint8_t { LayerNorm, RmsNorm }; // weight and bias; weight only
// What the backward computes again instead of keeping it (Megatron-LM's
// --recompute-granularity): nothing; the attention core, QKᵀ, softmax, dropout and the
// product with V (selective, Korthikanti et al. 2022 §5); the whole layer from its input
// (full, with --recompute-method uniform --recompute-num-layers 1: every layer's input is
// its checkpoint).
enum class Recompute : uint8_t { None, Selective, Full };
// Its spelling in model files and --model-set: none, selective, full.
const char *recomputeName(Recompute recompute);

struct Transformer {
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;     // h
  int64_t heads = 0;      // a
  int64_t kvHeads = 0;    // heads of K and V (= heads: multi-head attention)
  int64_t ffn = 0;        // the MLP's inner size
  int64_t vocab = 0;      // V
  int64_t sequence = 0;   // s
  int64_t microBatch = 1; // b
  bool gatedMlp = false;  // SwiGLU: gate, up and down matrices
  bool biases = false;    // in every linear layer and norm
  Norm norm = Norm::LayerNorm;
  bool tiedEmbeddings = false;     // the output layer is the token embedding
  bool positionEmbeddings = false; // learned, sequence x hidden
  bool dropout = false;            // masks kept for the backward
  bool flashAttention = false;     // FlashAttention: the scores never leave the kernel
  Recompute recompute = Recompute::None;
  // Megatron-LM's contiguous fp32 gradient buffer (its DDP's main_grad): allocated with the
  // weights, 4 bytes for every parameter a rank holds, where each gradient is accumulated.
  bool mainGradBuffer = false;
  int64_t tensorParallel = 1;    // t: accelerators sharing each layer (one rank is one)
  bool sequenceParallel = false; // norms and dropout on 1/t of the sequence
  // Mixture of experts (none: 0 experts). Every layer from `denseLayers` on replaces its MLP
  // with a router over `experts` routed experts and `sharedExperts` always-on ones, each a
  // gated MLP of `expertFfn`; a token goes to its router's `topK` routed experts. Routing is
  // taken as balanced (every routed expert gets tokens x topK / experts of them), and each
  // expert computes `capacityFactor` times its share (padded buffers; 1: exactly its share).
  int64_t experts = 0, topK = 0, expertFfn = 0, sharedExperts = 0, denseLayers = 0;
  double capacityFactor = 1;
  // Multi-head latent attention (DeepSeek-V2, §2.1; DeepSeek-V3): queries through a rank
  // `qLoraRank` bottleneck (0: none), keys and values through a `kvLoraRank` latent (0: not
  // MLA: grouped-query attention), each head's query and key `qkNopeHeadDim` + `qkRopeHeadDim`
  // wide (the rotary part of the key shared by the heads) and its value `vHeadDim`.
  int64_t qLoraRank = 0, kvLoraRank = 0, qkNopeHeadDim = 0, qkRopeHeadDim = 0, vHeadDim = 0;

  // Per layer (0 .. layers - 1): parameters (of the whole layer, and one rank's share of
  // them under tensor parallelism), FLOPs per micro-batch and activation bytes per
  // micro-batch (one rank's).
  int64_t layerParameters(int64_t layer) const;
  // Parameters of the output layer's own copy of the word embedding a rank keeps where the
  // embedding is tied and the rank holds the last layer but not the first (Megatron-LM's
  // pipeline-parallel tied embedding), per accelerator: V x h / t; 0 when untied.
  double embeddingCopyParameters() const {
    return tiedEmbeddings
               ? static_cast<double>(vocab) * static_cast<double>(hidden) / static_cast<double>(tensorParallel)
               : 0;
  }
  double rankParameters(int64_t layer) const;
  double forwardFlops(int64_t layer) const;
  double backwardInputFlops(int64_t layer) const;
  double backwardWeightFlops(int64_t layer) const;
  double backwardFlops(int64_t layer) const { return backwardInputFlops(layer) + backwardWeightFlops(layer); }
  // What the backward (or its input half) computes again, per micro-batch: with full
  // recomputation the layer's forward (its block: not the embedding, logits or loss, which
  // Megatron-LM does not checkpoint); with selective, attention's core, QKᵀ and the
  // product with V, 4bs²h (/ t) (Korthikanti et al. 2022, §5); with FlashAttention alone,
  // QKᵀ, 2bs²h (/ t), which its backward makes again (Dao 2023, §3.1.2); else 0.
  double recomputeFlops(int64_t layer) const;
  // Whether a layer keeps its attention scores (as²b) for the backward.
  bool keepsScores() const { return !flashAttention && recompute == Recompute::None; }
  double activationBytes(int64_t layer) const;
  // The kernels one pass of the layer launches per micro-batch on a rank that computes
  // `share` of its tensor-parallel part (the schedule's own split), appended to `out`
  // (cost/TransformerKernels.cpp).
  void kernels(int64_t layer, Pass pass, LayerShare share, const ElementSizes &size, KernelList &out) const;
  // The same on one of `parts` accelerators computing the layer (tensor parallelism), with
  // its input whole or split along the sequence.
  double partActivationBytes(int64_t layer, int64_t parts, bool sequence) const;

  // Elements of the activation one layer hands the next, on one rank: s x b x h, split
  // along the sequence under sequence parallelism.
  double boundaryElements() const;
  int64_t parameters() const; // the whole model
  // The parameters one token computes with: the routed experts of its top-k only (the
  // embeddings and the output layer counted, as the published active counts do).
  int64_t activeParameters() const;
  bool hasExperts() const { return experts > 0; }
  bool moeLayer(int64_t layer) const { return experts > 0 && layer >= denseLayers; }
  // The routed experts' parameters of a layer (0 on a dense one): what an expert-parallel
  // rank splits (`load(l, expert = e, experts = E)`); the rest is its dense part.
  int64_t routedExpertParameters(int64_t layer) const;
  // The same on one rank of a tensor-parallel group (each expert's FFN split t ways).
  double rankRoutedParameters(int64_t layer) const {
    return static_cast<double>(routedExpertParameters(layer)) / static_cast<double>(tensorParallel);
  }
  // Matrices every rank of a tensor-parallel group holds and computes whole: MLA's query and
  // key-value down projections, a mixture-of-experts layer's router.
  int64_t replicatedMatrixParameters(int64_t layer) const;
  // One expert's gated MLP (gate, up, down), and MLA's two latent RMSNorms (0 without MLA).
  int64_t expertParameters() const { return 3 * hidden * expertFfn; }
  int64_t latentNormParameters() const { return kvLoraRank > 0 ? kvLoraRank + qLoraRank : 0; }
  int64_t kvHidden() const { return hidden / heads * kvHeads; }
  // Each head's query and key width, and its value's (MLA's own, else hidden / heads).
  int64_t qkHeadDim() const { return kvLoraRank > 0 ? qkNopeHeadDim + qkRopeHeadDim : hidden / heads; }
  int64_t valueHeadDim() const { return kvLoraRank > 0 ? vHeadDim : hidden / heads; }
  // Attention's core per micro-batch, on one of t ranks: QKᵀ and the product with V,
  // 2·b·s²·a·(qk + v) / t (4bs²h / t for multi-head attention).
  double attentionCoreFlops() const;
  // A mixture-of-experts layer's routed experts, per micro-batch on one rank of t: the FLOPs
  // of a pass (forward, and each backward half: one more pass of their GEMMs) and the
  // activation bytes they keep (what a token sends each of its top-k experts and what the
  // expert keeps of it), at the capacity factor; 0 on a dense layer. The rest of the layer's
  // is its dense part's (under full recomputation the layer keeps its input alone, and the
  // experts their tokens' copies).
  double routedFlops(int64_t layer) const;
  double routedActivationBytes(int64_t layer) const;
  // How many copies of a token an all-to-all moves: top-k at the capacity factor (1 without
  // experts).
  double dispatchFactor() const { return experts > 0 ? static_cast<double>(topK) * capacityFactor : 1; }
  // The first problem with the shape ("heads (48) must divide hidden (6000)"), or "".
  std::string invalid() const;

  // One block's matrices: attention's (Q, K, V, O, or MLA's projections) and the MLP's (a
  // mixture-of-experts layer's router, shared and routed experts); `active`: with only the
  // top-k routed experts, at the capacity factor (what a token computes).
  int64_t attentionMatrixParameters() const;
  double mlpMatrixParameters(int64_t layer, bool active) const;
  double blockMatrixParameters(int64_t layer, bool active = false) const;

private:
  int64_t blockParameters(int64_t layer) const; // with its norms and biases
  int64_t normParameters() const;               // one norm's weight (and bias)
  int64_t rowParallelBiases() const;            // O's and the MLP's last bias: whole on every rank
};

// Every preset, in a fixed order, and one by name (null: none).
const std::vector<Transformer> &transformerPresets();
const Transformer *findTransformerPreset(const std::string &name);
// "gpt3-175b, llama3-8b, ...": for messages and help.
std::string transformerPresetNames();

} // namespace schedc::cost
