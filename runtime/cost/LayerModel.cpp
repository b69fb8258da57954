// The two layer models: a transformer's per-layer figures, and the real backends' tanh(xW1)W2.
#include "cost/LayerModel.h"

namespace schedc::cost {

namespace {

class TransformerLayers final : public LayerModel {
public:
  explicit TransformerLayers(Transformer t) : t_(std::move(t)) {}
  std::string name() const override { return t_.name; }
  int64_t layers() const override { return t_.layers; }
  double parameters(int64_t l) const override { return t_.rankParameters(l); }
  double forwardFlops(int64_t l) const override { return t_.forwardFlops(l); }
  double backwardInputFlops(int64_t l) const override { return t_.backwardInputFlops(l); }
  double backwardWeightFlops(int64_t l) const override { return t_.backwardWeightFlops(l); }
  double boundaryElements() const override { return t_.boundaryElements(); }
  double tokensPerMicroBatch() const override { return static_cast<double>(t_.sequence * t_.microBatch); }
  double totalParameters() const override { return static_cast<double>(t_.parameters()); }
  double activeParameters() const override { return static_cast<double>(t_.activeParameters()); }
  void kernels(int64_t l, Pass pass, LayerShare share, const ElementSizes &size, KernelList &out) const override {
    t_.kernels(l, pass, share, size, out);
  }
  // What is not kept (the layer under full recomputation, attention's core under
  // selective, the scores inside FlashAttention) is made again for the input gradient: in
  // the whole backward and its input half.
  double recomputeFlops(int64_t l, EventKind kind) const override {
    return kind == EventKind::Backward || kind == EventKind::BackwardInput ? t_.recomputeFlops(l) : 0;
  }
  bool recomputesForward() const override { return t_.recompute == Recompute::Full; }
  int64_t tensorParallel() const override { return t_.tensorParallel; }
  double tensorParallelElements() const override {
    return static_cast<double>(t_.sequence * t_.microBatch * t_.hidden);
  }
  // Megatron-LM's f and g operators around attention and around the MLP (Korthikanti et
  // al. 2022, §4.2.2; megatron/core/tensor_parallel/mappings.py and layers.py): without
  // sequence parallelism each forward all-reduces both sublayers' outputs and each backward
  // both inputs' gradients; with it, a forward all-gathers each sublayer's input and
  // reduce-scatters its output, a backward's input half all-gathers each output's gradient
  // and reduce-scatters each input's, and its weight half all-gathers each input again
  // (LinearWithGradAccumulationAndAsyncCommunication keeps the shard, not the gathered
  // input). Full recomputation runs the forward's collectives again in the backward — also
  // where the parts are the schedule's, whose collective events are the rest. Beside the
  // blocks, where the schedule has no collective of its own for them:
  //   the first layer's VocabParallelEmbedding (layers.py) sums its vocabulary shards'
  //     rows: an all-reduce of its output (reduce_from_tensor_model_parallel_region); with
  //     sequence parallelism and no learned positions a reduce-scatter instead
  //     (LanguageModelEmbedding's reduce_scatter_embeddings), with learned positions the
  //     all-reduce, the positions added, then a local split
  //     (scatter_to_sequence_parallel_region); either way the sequence-parallel backward
  //     all-gathers the gradient for the embedding's weight half;
  //   the last layer's output layer, a ColumnParallelLinear over the vocabulary: with
  //     sequence parallelism its forward all-gathers the input (not where the schedule
  //     writes the parallelism: its own all-gather before the loss is that one), its
  //     backward reduce-scatters the input's gradient and all-gathers the input again for
  //     the weight's; without, its backward all-reduces the input's gradient;
  //   and its vocabulary-parallel cross-entropy (cross_entropy.py, VocabParallelCrossEntropy)
  //     all-reduces three fp32 values a token in the forward: the logits' maximum, the
  //     target's logit and the sum of exponentials.
  TensorParallelTraffic tensorParallelTraffic(int64_t layer, EventKind kind, LayerShare share) const override {
    const bool inModel = t_.tensorParallel > 1, inSchedule = !inModel && share.parts > 1;
    const bool sp = inModel ? t_.sequenceParallel : share.sequence;
    const bool first = layer == 0, last = layer == t_.layers - 1, split = inModel || inSchedule;
    const TensorParallelTraffic forward = sp ? TensorParallelTraffic{0, 2, 2} : TensorParallelTraffic{2, 0, 0};
    TensorParallelTraffic traffic;
    auto add = [&](TensorParallelTraffic more) {
      traffic.allReduces += more.allReduces, traffic.allGathers += more.allGathers,
          traffic.reduceScatters += more.reduceScatters, traffic.tokenAllReduces += more.tokenAllReduces;
    };
    const bool input = kind == EventKind::Backward || kind == EventKind::BackwardInput;
    const bool weight = kind == EventKind::Backward || kind == EventKind::BackwardWeight;
    switch (kind) {
    case EventKind::Forward:
      if (inModel)
        add(forward);
      if (split && first)
        add(sp && !t_.positionEmbeddings ? TensorParallelTraffic{0, 0, 1} : TensorParallelTraffic{1, 0, 0});
      if (split && last)
        add({0, sp && inModel ? 1 : 0, 0, 3});
      break;
    case EventKind::Backward:
    case EventKind::BackwardInput:
    case EventKind::BackwardWeight:
      if (inModel && input)
        add(sp ? TensorParallelTraffic{0, 2, 2} : TensorParallelTraffic{2, 0, 0});
      if (inModel && sp && weight)
        add({0, 2, 0});
      if (split && input && t_.recompute == Recompute::Full)
        add(forward);
      if (split && first && sp && weight)
        add({0, 1, 0});
      if (split && last && input)
        add(sp ? TensorParallelTraffic{0, 0, 1} : TensorParallelTraffic{1, 0, 0});
      if (split && last && sp && weight)
        add({0, 1, 0});
      break;
    case EventKind::Loss:
    case EventKind::Update: SCHEDC_COLLECTIVE_EVENT_CASES
    case EventKind::Pass:
    case EventKind::Offload:
    case EventKind::Prefetch: break;
    }
    traffic.group = inModel ? t_.tensorParallel : share.parts;
    return traffic;
  }
  int activationCollectivesPerLayer() const override { return 2; }
  double embeddingCopyParameters() const override { return t_.embeddingCopyParameters(); }
  bool hasExperts() const override { return t_.hasExperts(); }
  double routedParameters(int64_t l) const override { return t_.rankRoutedParameters(l); }
  double routedFlops(int64_t l) const override { return t_.routedFlops(l); }
  double dispatchFactor() const override { return t_.dispatchFactor(); }
  double capacityFactor() const override { return t_.capacityFactor; }

private:
  Transformer t_;
};

class TanhLayers final : public LayerModel {
public:
  TanhLayers(int64_t hidden, int64_t tokens) : h_(static_cast<double>(hidden)), t_(static_cast<double>(tokens)) {
    name_ = "tanh(xW1)W2, H " + std::to_string(hidden) + ", T " + std::to_string(tokens);
  }
  std::string name() const override { return name_; }
  int64_t layers() const override { return 0; }
  double parameters(int64_t) const override { return h_ * h_; }
  double forwardFlops(int64_t) const override { return gemm(); }
  double backwardInputFlops(int64_t) const override { return gemm(); }
  double backwardWeightFlops(int64_t) const override { return gemm(); }
  double recomputeFlops(int64_t, EventKind kind) const override {
    return kind == EventKind::BackwardWeight ? gemm() : gemm() / 2; // h, and dh for a weight half alone
  }
  // W1 is split by columns and W2 by rows among `parts`: the inner size is H / (2 parts).
  void kernels(int64_t, Pass pass, LayerShare share, const ElementSizes &size, KernelList &out) const override {
    const double t = t_, h = h_, inner = h_ / 2 / static_cast<double>(share.parts);
    auto elementwise = [&](double elements) { out.push_back(Kernel::memory("tanh and dz", 8 * elements, elements)); };
    // Every backward call makes h = tanh(x W1) again and dh = g W2ᵀ; the input half then
    // dx = dz W1ᵀ, the weight half dW1 = xᵀ dz and dW2 = hᵀ g.
    auto again = [&] {
      out.push_back(Kernel::gemm("x W1 again", 1, t, inner, h));
      out.push_back(Kernel::gemm("dh = g W2t", 1, t, inner, h));
    };
    auto inputGradient = [&] { out.push_back(Kernel::gemm("dx = dz W1t", 1, t, h, inner)); };
    auto weightGradients = [&] {
      // As the backends store W1 (H/2 rows of H) and compute it: dW1ᵀ = dzᵀ x.
      out.push_back(Kernel::gemm("dW1 = xt dz", 1, inner, h, t));
      out.push_back(Kernel::gemm("dW2 = ht g", 1, inner, h, t));
    };
    switch (pass) {
    case Pass::Loss: // the squared error's gradient: reads y, makes the target, writes g
      out.push_back(Kernel::memory("loss gradient", 3 * t * h * size.activation, t * h));
      return;
    case Pass::Forward:
      out.push_back(Kernel::gemm("x W1", 1, t, inner, h));
      out.push_back(Kernel::gemm("h W2", 1, t, h, inner));
      elementwise(t * inner);
      return;
    case Pass::Backward: again(), inputGradient(), weightGradients(); break;
    case Pass::BackwardInput: again(), inputGradient(); break;
    case Pass::BackwardWeight: again(), weightGradients(); break;
    }
    elementwise(2 * t * inner);
  }
  double boundaryElements() const override { return t_ * h_; }
  double tokensPerMicroBatch() const override { return t_; }

private:
  double gemm() const { return 2 * t_ * h_ * h_; } // (T x H)(H x H/2) and (T x H/2)(H/2 x H)
  double h_, t_;
  std::string name_;
};

} // namespace

std::shared_ptr<const LayerModel> transformerLayers(Transformer model) {
  return std::make_shared<const TransformerLayers>(std::move(model));
}

std::shared_ptr<const LayerModel> tanhLayers(int64_t hidden, int64_t tokens) {
  return std::make_shared<const TanhLayers>(hidden, tokens);
}

} // namespace schedc::cost
