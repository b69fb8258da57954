// LayerModel — what the hardware cost model needs of the model a schedule trains, layer by
// layer: parameters, FLOPs per micro-batch, and the elements of the activation one layer
// hands the next. Two exist:
//   a transformer decoder (cost/Transformer.h), its layers fixed by the model;
//   the real backends' own layer, y = tanh(x W1) W2 with H x H parameters (W1 H x H/2, W2
//   H/2 x H) and micro-batches of T rows (backend/Tensors.h), any number of layers. With
//   G = 2TH²: a forward is two half GEMMs, G; a backward's input half is dh = g W2ᵀ and
//   dx = dz W1ᵀ, G; its weight half dW1 = xᵀ dz and dW2 = hᵀ g, G; every backward call —
//   whole, or either half of a split one — first recomputes h = tanh(x W1), G/2, and a
//   weight half alone computes dh again, G/2 more (cpu/Kernels.h, cuda/CudaRank.cpp).
//   Element-wise, a forward takes tanh of TH/2 elements, every backward call TH (the
//   recomputed tanh and dz = dh (1 - h²)), each element read and written in fp32.
// Each lists the kernels of its passes (cost/Kernels.h), which the hardware cost model
// times; the FLOPs below are what MFU and HFU count.
#pragma once

#include "diagnostics/InternalError.h"

#include "cost/Transformer.h"
#include "ops/Operations.h"

#include <cstdint>
#include <memory>
#include <string>

namespace schedc::cost {

class LayerModel {
public:
  virtual ~LayerModel() = default;
  virtual std::string name() const = 0;
  // Its layer count; 0: any (the schedule's own).
  virtual int64_t layers() const = 0;
  virtual double parameters(int64_t layer) const = 0;
  // FLOPs per micro-batch; the backward halves without recomputation.
  virtual double forwardFlops(int64_t layer) const = 0;
  virtual double backwardInputFlops(int64_t layer) const = 0;
  virtual double backwardWeightFlops(int64_t layer) const = 0;
  // What a backward call of `kind` (whole, or either half) computes again first, per
  // micro-batch.
  virtual double recomputeFlops(int64_t /*layer*/, EventKind /*kind*/) const { return 0; }
  // Whether that is the layer's whole forward again (full recomputation).
  virtual bool recomputesForward() const { return false; }
  // The kernels of one pass per micro-batch on a rank computing `share` of the layer (the
  // schedule's tensor-parallel split), appended to `out`.
  virtual void kernels(int64_t layer, Pass pass, LayerShare share, const ElementSizes &size, KernelList &out) const = 0;
  // Elements of one micro-batch's activation between two layers.
  virtual double boundaryElements() const = 0;
  // Tokens in one micro-batch (sequence x micro_batch; the backends' T rows).
  virtual double tokensPerMicroBatch() const = 0;
  // Model FLOPs of one micro-batch through every layer (forward and backward, without
  // recomputation or the experts' capacity padding), on one rank of a tensor-parallel group;
  // 0 when the layer count is the schedule's (then a step's micro-batches are counted another
  // way).
  double modelFlopsPerMicroBatch() const {
    double flops = 0;
    for (int64_t l = 0; l < layers(); ++l)
      flops += forwardFlops(l) + backwardInputFlops(l) + backwardWeightFlops(l) - 3 * paddingFlops(l);
    return flops;
  }
  // Parameters of the whole model (0: the schedule's layer count decides).
  virtual double totalParameters() const { return 0; }
  // Those one token computes with (a mixture of experts' top-k routed experts only).
  virtual double activeParameters() const { return totalParameters(); }
  // Accelerators sharing each layer (tensor parallelism; cost/Transformer.h): a rank is one.
  virtual int64_t tensorParallel() const { return 1; }
  // Elements of each tensor-parallel collective a compute event waits for (one sequence x
  // micro_batch x hidden tensor), and how many of each kind an event of `kind` waits for
  virtual double tensorParallelElements() const { return 0; }
  // among `group` accelerators: the model's tensor_parallel; or, where the parts are the
  // schedule's (`share`), only what its own collective events leave out.
  // (And all-reduces of one fp32 value a token: a vocabulary-parallel cross-entropy's.)
  struct TensorParallelTraffic {
    int allReduces = 0, allGathers = 0, reduceScatters = 0;
    int tokenAllReduces = 0;
    int64_t group = 1;
  };
  virtual TensorParallelTraffic tensorParallelTraffic(int64_t /*layer*/, EventKind /*kind*/,
                                                      LayerShare /*share*/) const {
    return {};
  }
  // How many collectives of a layer's activations one in the schedule stands for: a
  // transformer layer completes its partial sums twice (after attention and after the MLP),
  // the backends' layer once.
  virtual int activationCollectivesPerLayer() const { return 1; }
  // Parameters of the output layer's copy of a tied word embedding, per accelerator (0: none).
  virtual double embeddingCopyParameters() const { return 0; }
  // Mixture of experts: whether its layers have routed experts (a schedule may then split a
  // layer around its all-to-alls); a layer's routed experts' parameters on one rank of a
  // tensor-parallel group, the FLOPs of one pass of their GEMMs per micro-batch (forward, or
  // either half of a backward), and the copies of each token an all-to-all moves. The rest of
  // a layer's parameters and FLOPs are its dense part's.
  virtual bool hasExperts() const { return false; }
  virtual double routedParameters(int64_t /*layer*/) const { return 0; }
  virtual double routedFlops(int64_t /*layer*/) const { return 0; }
  virtual double dispatchFactor() const { return 1; }
  // The share of the routed experts' FLOPs that is padding: each expert computes this many
  // times its tokens (routedFlops includes it; the model's FLOPs do not).
  virtual double capacityFactor() const { return 1; }
  // Of one pass of the routed experts' FLOPs, the capacity factor's padding.
  double paddingFlops(int64_t layer) const { return routedFlops(layer) * (1 - 1 / capacityFactor()); }
  // Parameters of one side of layer `layer` on one rank (LayerHalf: all of it, the dense part,
  // or every routed expert).
  double sideParameters(int64_t layer, LayerHalf half) const {
    switch (half) {
    case LayerHalf::Whole: return parameters(layer);
    case LayerHalf::Dense: return parameters(layer) - routedParameters(layer);
    case LayerHalf::Experts: return routedParameters(layer);
    }
    SCHEDC_UNREACHABLE("a side of a layer without its parameters");
  }
};

std::shared_ptr<const LayerModel> transformerLayers(Transformer model);
std::shared_ptr<const LayerModel> tanhLayers(int64_t hidden, int64_t tokens);

} // namespace schedc::cost
