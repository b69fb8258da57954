// HardwareCost — the `hardware` cost model: how long each event of a transformer's training
// step takes on a machine, in seconds, each event on the stream of its class (compute,
// collectives, point-to-point), so communication overlaps the compute that does not wait
// for it. The schedule's layer l is the model's layer l (cost/LayerModel.h: a transformer,
// or the real backends' tanh(xW1)W2 layer).
//   forward, backward  the kernels the layer model lists for the pass (cost/Kernels.h;
//                      a whole backward, or either half of a split one, with what it
//                      computes again) x micro-batches, one after another: a GEMM at the
//                      rate the machine's table gives its shape and precision
//                      (cost/GemmTable.h; peak x gemm_efficiency without a table), fused
//                      attention at peak x attention_efficiency, a memory-bound kernel its
//                      bytes / (memory bandwidth x memory_efficiency) — or, on a machine
//                      with an element-wise rate (a calibrated one), its elements / that rate
//   loss               the layer model's loss kernels (a transformer's are its last
//                      layer's forward and backward: none of its own) x micro-batches
//   update             memory-bound: the bytes the optimizer reads and writes per parameter
//                      of the weight's shards (updateBytesPerParameter) / the machine's
//                      update bandwidth (a calibrated one: the backend's optimizer as it
//                      runs), else its memory bandwidth — a fused optimizer's roofline;
//                      at an end of Megatron's embedding group (a tied embedding split
//                      between the first and last pipeline stage), first the all-reduce of
//                      the embedding's gradient over the two
//                      (finalize_model_grads.py, _allreduce_word_embedding_grads)
//   collectives        NCCL's ring model (src/graph/tuning.cc): a collective of n ranks on
//                      N nodes takes s = 2(n - 1) steps (all-reduce) or n - 1 (all-gather,
//                      reduce-scatter), 2(N - 1) (or N - 1) of them across nodes; time =
//                      intra-node steps x intra latency + inter-node steps x inter latency +
//                      bytes x s / (n x bandwidth), bytes being the whole buffer (an
//                      all-gather's output) and the bandwidth that of the slowest link the
//                      group spans (x all_gather_efficiency or reduce_scatter_efficiency); an all-reduce across nodes
//                      takes NCCL's tree instead where that is faster (many nodes, few bytes): time = 2((n/N - 1) x
//                      tree intra latency + floor(log2 N) x tree inter latency) + bytes / (0.45 x bandwidth)
//   tensor parallelism a compute event of a model with tensor_parallel = t adds the
//                      collectives it waits for (LayerModel::tensorParallelTraffic:
//                      Megatron-LM's f and g around attention and the MLP), over its t
//                      accelerators, each of s x b x h activations, x micro-batches; a
//                      schedule's own collective of a layer's activations counts as the
//                      layer's two
//   send               latency + bytes / bandwidth of the link between the two ranks; the
//                      receive takes no time of its own (it waits for the send's end)
// Bytes: a weight-sized value (weights, gradients, optimizer states) of layer l holds
// (units / 512²) of the layer's parameters at its precision (sim/Bytes.h; the last layer's
// with the output layer's copy of a tied embedding, where it has one); an activation
// (units / (512 x 256)) micro-batches of the model's boundary elements (sequence x
// micro_batch x hidden; T x H).
#pragma once

#include "cost/CostModel.h"
#include "cost/Hardware.h"
#include "cost/LayerModel.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace schedc::cost {

// The precision the model trains at (as sim::ByteModel sets it).
struct TrainingPrecision {
  bool bf16 = false;
  bool fp32Gradients = false;
  int optimizerMoments = 1;
  bool tf32 = false; // fp32 GEMMs on TF32 tensor cores (the cuda backend's --tf32)
};

// Bytes an optimizer step reads and writes per parameter: the gradient (`gradientBytes`);
// the fp32 master (at fp32, the weight itself) and each fp32 moment, read and written; at
// bf16 the new bf16 weight, written.
double updateBytesPerParameter(double gradientBytes, bool bf16, int moments);

class HardwareCost final : public CostModel {
public:
  HardwareCost(std::shared_ptr<const LayerModel> model, Hardware hardware, TrainingPrecision precision)
      : model_(std::move(model)), hardware_(std::move(hardware)), precision_(precision) {}

  std::string_view name() const override { return "hardware"; }
  bool oneStream() const override { return !hardware_.overlap; }
  Number length(const Work &work) const override;
  // One NCCL call over the coalesced collectives' bytes together: one launch, one ring's (or
  // tree's) latency; each its share, the call's time over its bytes and those before it less
  // the call's over those before it (one alone: length(), as collectiveSeconds prices it).
  void coalescedLengths(std::span<const Work> call, std::span<Number> lengths) const override;
  double flops(const Work &work) const override;
  double modelFlops(const Work &work) const override;
  double communicationBytes(const Work &work) const override { return bytesOf(work); }
  bool modelsExperts() const override { return model_->hasExperts(); }
  bool inSeconds() const override { return true; }
  bool placesRanksOnNodes() const override { return true; }
  // A rank is one of its tensor-parallel group's accelerators: the group's first.
  int64_t nodeOf(int64_t rank) const override;
  std::string missingForTier(Tier from, Tier to) const override;

  const LayerModel &model() const { return *model_; }
  const Hardware &hardware() const { return hardware_; }
  // The accelerator's peak at the GEMMs' precision, and that precision's name.
  double peak() const { return hardware_.peak(gemm()); }
  const char *gemmPrecision() const { return Hardware::gemmName(gemm()); }
  // Seconds of one micro-batch's pass over `layer` on a rank computing `share` of it
  // (its kernels', one after another), and of one kernel.
  double passSeconds(int64_t layer, Pass pass, LayerShare share) const;
  double kernelSeconds(const Kernel &kernel) const;
  // Bytes of one element of `data`.
  double elementBytes(Data data) const;
  // Bytes of the data an event moves or updates.
  double bytesOf(const Work &work) const;
  // Seconds of a send of `bytes` between ranks on `nodes` nodes (1: inside one); of one
  // micro-batch's activation between two layers.
  double messageSeconds(double bytes, int64_t nodes) const;
  double activationMessageSeconds(int64_t nodes) const;

private:
  Hardware::Gemm gemm() const { return hardware_.gemm(precision_.bf16, precision_.tf32); }
  double seconds(const Work &work) const;
  double collectiveSeconds(const Work &work) const;
  // A collective's buffer in bytes, and the NCCL calls it stands for (a layer's activations:
  // each of its partial-sum completions).
  double callBytes(const Work &work) const;
  double callsOf(const Work &work) const;
  // An offload or a prefetch (a copy between tiers); an optimizer step on the host's CPUs.
  double transferSeconds(const Work &work) const;
  double hostUpdateBandwidth() const;
  double nvmeBandwidth(bool write) const;
  double sideFlops(const Work &work, double whole, double passes, bool model = false) const;
  // NCCL's time for a collective of `kind` (all-reduce, all-gather, reduce-scatter) of n
  // ranks on `nodes` nodes moving `bytes` (the whole buffer): the ring, or for an all-reduce
  // across nodes the tree where that is faster.
  double ncclSeconds(EventKind kind, double n, double nodes, double bytes) const;
  double tensorParallelSeconds(const Work &work) const;
  int64_t modelLayer(int64_t layer) const;

  std::shared_ptr<const LayerModel> model_;
  Hardware hardware_;
  TrainingPrecision precision_;
  // passSeconds by (layer, pass, parts): every layer of a model repeats a few shapes, and
  // ranks ask from threads of their own.
  mutable std::mutex passMutex_;
  mutable std::map<std::tuple<int64_t, Pass, LayerShare>, double> passCache_;
};

} // namespace schedc::cost
