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
  // Attention's scores, not kept (selective recomputation, FlashAttention), are made
  // again for the input gradient: the whole backward and its input half.
  double recomputeFlops(int64_t, EventKind kind) const override {
    return kind == EventKind::Backward || kind == EventKind::BackwardInput ? t_.scoreRecomputeFlops() : 0;
  }
  int64_t tensorParallel() const override { return t_.tensorParallel; }
  // Megatron's f and g: the forward's two all-reduces of s x b x h (after attention and
  // after the MLP), and the input gradient's two in the backward; with sequence
  // parallelism an all-gather and a reduce-scatter in place of each, the same ring time.
  double tensorParallelElements() const override {
    return static_cast<double>(t_.sequence * t_.microBatch * t_.hidden);
  }
  int tensorParallelAllReduces(EventKind kind) const override {
    if (t_.tensorParallel == 1)
      return 0;
    return kind == EventKind::Forward || kind == EventKind::Backward || kind == EventKind::BackwardInput ? 2 : 0;
  }

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
  double elementwiseElements(int64_t, EventKind kind) const override {
    return kind == EventKind::Forward ? t_ * h_ / 2 : t_ * h_;
  }
  double boundaryElements() const override { return t_ * h_; }

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
