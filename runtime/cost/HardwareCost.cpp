// HardwareCost implementation: the formulas of the header, one per kind of event.
#include "cost/HardwareCost.h"

#include "diagnostics/InternalError.h"

#include <algorithm>
#include <cmath>

namespace schedc::cost {

namespace {

constexpr double kWeightUnits = 512.0 * 512.0;     // a whole weight in the puzzle's units
constexpr double kActivationUnits = 512.0 * 256.0; // one micro-batch of activations

// NCCL's all-to-all is a group of point-to-point calls, a send and a receive with every peer
// (nccl-tests src/alltoall.cu, AlltoAllRunColl); each rank sends (n - 1)/n of its buffer, the
// bus bandwidth nccl-tests reports for it (AlltoAllGetBw: algbw x (n - 1)/n). The slices for
// peers in the node go over its links while those for other nodes go over the network, at
// once: the slower of the two, plus each peer's latency.
double allToAllSeconds(const Hardware &hardware, double n, double nodes, double bytes) {
  const double local = n / nodes; // ranks a node
  const double localPeers = local - 1, remotePeers = n - local;
  const Link intra = hardware.link(1), inter = hardware.link(2);
  double transfer = bytes * localPeers / n / intra.bandwidth;
  if (remotePeers > 0)
    transfer = std::max(transfer, bytes * remotePeers / n / inter.bandwidth);
  return localPeers * hardware.intraLatency + remotePeers * hardware.interLatency + transfer;
}

} // namespace

int64_t HardwareCost::modelLayer(int64_t layer) const {
  return model_->layers() > 0 ? std::clamp<int64_t>(layer, 0, model_->layers() - 1) : std::max<int64_t>(layer, 0);
}

double HardwareCost::elementBytes(Data data) const {
  const double low = precision_.bf16 ? 2 : 4;
  switch (data) {
  case Data::Weights:
  case Data::Activations: return low;
  case Data::Gradients: return precision_.bf16 && !precision_.fp32Gradients ? 2 : 4;
  case Data::OptimizerState: return (precision_.bf16 ? 4 : 0) + 4.0 * precision_.optimizerMoments;
  case Data::None: break;
  }
  return 0;
}

double HardwareCost::bytesOf(const Work &w) const {
  if (w.data == Data::Activations) // (a mixture-of-experts layer's tokens: each token's top-k copies)
    return w.volume / kActivationUnits * model_->boundaryElements() * elementBytes(w.data) *
           (w.tokenCopies ? model_->dispatchFactor() : 1);
  int64_t layer = w.kind == EventKind::Update ? w.updatedLayer : w.layer;
  double parameters =
      model_->sideParameters(modelLayer(layer), w.half) + (w.embeddingCopy ? model_->embeddingCopyParameters() : 0);
  // A side of a mixture-of-experts layer is half a layer's units (sim/Value.h): its volume is
  // in those.
  double units = w.half == LayerHalf::Whole ? kWeightUnits : kWeightUnits / 2;
  return w.volume / units * parameters * elementBytes(w.data);
}

double HardwareCost::callBytes(const Work &w) const {
  // The whole buffer: an all-gather's output is n of the pieces each member puts in.
  return bytesOf(w) * (w.kind == EventKind::AllGather ? w.groupSize : 1);
}

double HardwareCost::callsOf(const Work &w) const {
  // A collective of a layer's activations (the schedule's tensor parallelism) stands for
  // each of the layer's partial-sum completions: a transformer's two.
  // (Not the loss's gather of the last layer's output: one.)
  // (An all-to-all moves one value's tokens: once.)
  bool layerActivation = w.data == Data::Activations && w.kind != EventKind::AllToAll &&
                         (model_->layers() == 0 || w.layer < model_->layers());
  return layerActivation ? model_->activationCollectivesPerLayer() : 1;
}

double HardwareCost::collectiveSeconds(const Work &w) const {
  return callsOf(w) * ncclSeconds(w.kind, w.groupSize, std::max(1, w.nodes), callBytes(w));
}

double HardwareCost::ncclSeconds(EventKind kind, double n, double nodes, double bytes) const {
  if (n <= 1)
    return 0;
  if (kind == EventKind::AllToAll)
    return allToAllSeconds(hardware_, n, nodes, bytes);
  const bool allReduce = kind == EventKind::AllReduce;
  const double efficiency = kind == EventKind::AllGather       ? hardware_.allGatherEfficiency
                            : kind == EventKind::ReduceScatter ? hardware_.reduceScatterEfficiency
                                                               : 1;
  double steps = allReduce ? 2 * (n - 1) : n - 1;
  double interSteps = allReduce ? 2 * (nodes - 1) : nodes - 1;
  Link link = hardware_.link(static_cast<int64_t>(nodes));
  double ring = (steps - interSteps) * hardware_.intraLatency + interSteps * hardware_.interLatency +
                bytes * steps / (n * link.bandwidth * efficiency);
  if (!allReduce || nodes < 2 || hardware_.treeInterLatency <= 0)
    return ring;
  // NCCL's double binary tree across nodes, a chain inside each: up and down, so twice
  // (n/N - 1) intra-node hops and floor(log2 N) inter-node ones; its bus bandwidth 0.9 of
  // the link's, of which an all-reduce gets half. NCCL takes whichever is faster.
  double tree =
      2 * ((n / nodes - 1) * hardware_.treeIntraLatency + std::floor(std::log2(nodes)) * hardware_.treeInterLatency) +
      bytes / (0.5 * 0.9 * link.bandwidth);
  return std::min(ring, tree);
}

// The tensor-parallel collectives a compute event waits for, among the t accelerators of
// its rank: inside a node when t fits in one. An all-gather and a reduce-scatter of the same
// tensor each take half an all-reduce's ring steps.
double HardwareCost::tensorParallelSeconds(const Work &w) const {
  LayerModel::TensorParallelTraffic traffic =
      model_->tensorParallelTraffic(modelLayer(w.layer), w.kind, {w.tensorParts, w.sequenceParts});
  if (traffic.allReduces + traffic.allGathers + traffic.reduceScatters + traffic.tokenAllReduces == 0)
    return 0;
  double t = static_cast<double>(traffic.group);
  double nodes = std::ceil(t / static_cast<double>(hardware_.acceleratorsPerNode));
  double bytes = model_->tensorParallelElements() * elementBytes(Data::Activations);
  double tokenBytes = model_->tokensPerMicroBatch() * 4; // fp32
  double seconds = traffic.allReduces * ncclSeconds(EventKind::AllReduce, t, nodes, bytes) +
                   traffic.allGathers * ncclSeconds(EventKind::AllGather, t, nodes, bytes) +
                   traffic.reduceScatters * ncclSeconds(EventKind::ReduceScatter, t, nodes, bytes) +
                   traffic.tokenAllReduces * ncclSeconds(EventKind::AllReduce, t, nodes, tokenBytes);
  return static_cast<double>(w.microBatches) * seconds;
}

int64_t HardwareCost::nodeOf(int64_t rank) const {
  return hardware_.nodeOf(rank * model_->tensorParallel());
}

double updateBytesPerParameter(double gradientBytes, bool bf16, int moments) {
  double read = gradientBytes + 4 + 4.0 * moments, written = 4 + 4.0 * moments + (bf16 ? 2 : 0);
  return read + written;
}

// A side of a mixture-of-experts layer: of an event's FLOPs `whole` per micro-batch, `passes`
// passes of the routed experts' GEMMs are the experts' (on 1/groupSize of the dispatch
// group's tokens), the rest the dense part's. The model's FLOPs (`model`) leave out the
// capacity factor's padding, which the hardware computes.
double HardwareCost::sideFlops(const Work &w, double whole, double passes, bool model) const {
  const int64_t l = modelLayer(w.layer);
  double routed = passes * model_->routedFlops(l);
  double used = model ? routed - passes * model_->paddingFlops(l) : routed;
  switch (w.half) {
  case LayerHalf::Whole: return whole - (routed - used);
  case LayerHalf::Dense: return whole - routed;
  case LayerHalf::Experts: return used / std::max(1, w.groupSize);
  }
  SCHEDC_UNREACHABLE("a side of a layer without its flops");
}

double HardwareCost::flops(const Work &w) const {
  // A tensor-parallel part of a layer (the schedule's) computes its share of it.
  double m = static_cast<double>(w.microBatches) / w.tensorParts;
  int64_t l = modelLayer(w.layer);
  const LayerModel &model = *model_;
  // Full recomputation runs the experts' forward again in the backward and its input half.
  double again = model.recomputesForward() && w.kind != EventKind::BackwardWeight ? 1 : 0;
  switch (w.kind) {
  case EventKind::Forward: return m * sideFlops(w, model.forwardFlops(l), 1);
  case EventKind::Backward:
    return m * sideFlops(w,
                         model.recomputeFlops(l, w.kind) + model.backwardInputFlops(l) + model.backwardWeightFlops(l),
                         2 + again);
  case EventKind::BackwardInput:
    return m * sideFlops(w, model.recomputeFlops(l, w.kind) + model.backwardInputFlops(l), 1 + again);
  case EventKind::BackwardWeight:
    return m * sideFlops(w, model.recomputeFlops(l, w.kind) + model.backwardWeightFlops(l), 1);
  case EventKind::Loss:
  case EventKind::Update: SCHEDC_COLLECTIVE_EVENT_CASES
  case EventKind::Pass:
  case EventKind::Offload:
  case EventKind::Prefetch: return 0; // no GEMMs (an update's element-wise work is in seconds())
  }
  SCHEDC_UNREACHABLE("an event without its flops");
}

double HardwareCost::modelFlops(const Work &w) const {
  double m = static_cast<double>(w.microBatches) / w.tensorParts;
  int64_t l = modelLayer(w.layer);
  const LayerModel &model = *model_;
  switch (w.kind) {
  case EventKind::Backward:
    return m *
           sideFlops(w, model.forwardFlops(l) + model.backwardInputFlops(l) + model.backwardWeightFlops(l), 3, true);
  case EventKind::BackwardInput: return m * sideFlops(w, model.forwardFlops(l) + model.backwardInputFlops(l), 2, true);
  case EventKind::BackwardWeight: return m * sideFlops(w, model.backwardWeightFlops(l), 1, true);
  // The model's forward is counted once, with its backward: a forward event's share (and a
  // recomputed forward) is not the model's.
  case EventKind::Forward:
  case EventKind::Loss:
  case EventKind::Update: SCHEDC_COLLECTIVE_EVENT_CASES
  case EventKind::Pass:
  case EventKind::Offload:
  case EventKind::Prefetch: return 0;
  }
  SCHEDC_UNREACHABLE("an event without its model flops");
}

double HardwareCost::kernelSeconds(const Kernel &k) const {
  switch (k.kind) {
  case Kernel::Kind::Gemm: return k.flops / hardware_.gemmRate(gemm(), k.batch, k.m, k.n, k.k);
  case Kernel::Kind::Attention:
    return k.flops / (hardware_.attentionEfficiency > 0 ? peak() * hardware_.attentionEfficiency
                                                        : hardware_.gemmRate(gemm(), k.batch, k.m, k.n, k.k));
  case Kernel::Kind::Memory:
    return hardware_.elementwiseRate > 0 ? k.elements / hardware_.elementwiseRate
                                         : k.bytes / (hardware_.memoryBandwidth * hardware_.memoryEfficiency);
  }
  SCHEDC_UNREACHABLE("a kernel without its time");
}

double HardwareCost::passSeconds(int64_t layer, Pass pass, LayerShare share) const {
  auto key = std::make_tuple(modelLayer(layer), pass, share);
  {
    std::lock_guard<std::mutex> lock(passMutex_);
    if (auto found = passCache_.find(key); found != passCache_.end())
      return found->second;
  }
  KernelList kernels;
  model_->kernels(std::get<0>(key), pass, share, {elementBytes(Data::Activations), elementBytes(Data::Gradients)},
                  kernels);
  double seconds = 0;
  for (const Kernel &k : kernels)
    seconds += kernelSeconds(k);
  std::lock_guard<std::mutex> lock(passMutex_);
  passCache_.emplace(key, seconds);
  return seconds;
}

double HardwareCost::seconds(const Work &w) const {
  auto compute = [&](Pass pass) {
    // The experts' side computes its micro-batches' tokens at once, and no tensor-parallel
    // collective of the layer's own.
    const bool experts = w.half == LayerHalf::Experts;
    LayerShare share{.parts = w.tensorParts,
                     .sequence = w.sequenceParts,
                     .half = w.half,
                     .dispatch = experts ? std::max(1, w.groupSize) : 1,
                     .microBatches = experts ? w.microBatches : 1};
    return (experts ? 1 : static_cast<double>(w.microBatches)) * passSeconds(w.layer, pass, share) +
           (experts ? 0 : tensorParallelSeconds(w));
  };
  switch (w.kind) {
  case EventKind::Forward: return compute(Pass::Forward);
  case EventKind::Backward: return compute(Pass::Backward);
  case EventKind::BackwardInput: return compute(Pass::BackwardInput);
  case EventKind::BackwardWeight: return compute(Pass::BackwardWeight);
  case EventKind::Loss:
    return static_cast<double>(w.microBatches) * passSeconds(w.layer, Pass::Loss, {w.tensorParts, w.sequenceParts});
  case EventKind::Update: {
    double parameters = bytesOf(w) / elementBytes(Data::Weights);
    double bytes = parameters *
                   updateBytesPerParameter(elementBytes(Data::Gradients), precision_.bf16, precision_.optimizerMoments);
    if (w.tier == Tier::Host && hostUpdateBandwidth() <= 0)
      return 0; // (refused where the update is made)
    double seconds = bytes / (w.tier == Tier::Host            ? hostUpdateBandwidth()
                              : hardware_.updateBandwidth > 0 ? hardware_.updateBandwidth
                                                              : hardware_.memoryBandwidth);
    if (w.embeddingGroup) // the tied embedding's gradient (this rank's share of it, as of the
                          // weight), all-reduced between the first and last stage first
      seconds +=
          ncclSeconds(EventKind::AllReduce, 2, std::max(1, w.nodes),
                      w.volume / kWeightUnits * model_->embeddingCopyParameters() * elementBytes(Data::Gradients));
    return seconds;
  }
    SCHEDC_COLLECTIVE_EVENT_CASES return collectiveSeconds(w);
  case EventKind::Pass: // a receive (no volume): its message's time is the send's
    return w.volume == 0 ? 0 : messageSeconds(bytesOf(w), w.nodes);
  case EventKind::Offload:
  case EventKind::Prefetch: return transferSeconds(w);
  }
  SCHEDC_UNREACHABLE("an event the hardware cost model has no length for");
}

// A rank's share of its node's host memory bandwidth: the node's accelerators' optimizer steps
// run at once (data parallelism keeps them in step), each streaming its bytes through DRAM
// (ZeRO-Offload's CPU-Adam, DeepSpeed csrc/adam/cpu_adam_impl.cpp Adam_Optimizer::Step_AVX:
// one vectorised pass over the parameters, gradients and moments).
double HardwareCost::hostUpdateBandwidth() const {
  return hardware_.hostMemoryBandwidth / static_cast<double>(std::max<int64_t>(1, hardware_.acceleratorsPerNode));
}

// Device <-> host over the accelerator's PCIe link (each way its own); host <-> NVMe at the
// rank's share of its node's drives (its accelerators copy at once); device <-> NVMe through
// pinned host buffers, the two legs pipelined (DeepSpeed's swap_tensor/AsyncTensorSwapper):
// the slower leg's time.
double HardwareCost::transferSeconds(const Work &w) const {
  const double bytes = w.volume;
  const double share = static_cast<double>(std::max<int64_t>(1, hardware_.acceleratorsPerNode));
  const bool toNvme = w.tier == Tier::Nvme, nvme = toNvme || w.source == Tier::Nvme;
  const bool pcie = w.tier == Tier::Device || w.source == Tier::Device;
  // (A bandwidth the machine does not give is an error where the copy is made; its event
  // then takes no time.)
  double seconds = pcie && hardware_.pcieBandwidth > 0 ? bytes / hardware_.pcieBandwidth : 0;
  if (double drives = nvmeBandwidth(toNvme); nvme && drives > 0)
    seconds = std::max(seconds, bytes / (drives / share));
  return seconds;
}

// The node's drives to (`write`) or from NVMe: their write rate, or where the machine gives
// none their read rate; 0: neither.
double HardwareCost::nvmeBandwidth(bool write) const {
  return write && hardware_.nvmeWriteBandwidth > 0 ? hardware_.nvmeWriteBandwidth : hardware_.nvmeReadBandwidth;
}

std::string HardwareCost::missingForTier(Tier from, Tier to) const {
  if (from == Tier::Host && to == Tier::Host) // an update on the host
    return hardware_.hostMemoryBandwidth > 0 ? "" : "host_memory_bandwidth_gbs";
  if ((from == Tier::Device || to == Tier::Device) && hardware_.pcieBandwidth <= 0)
    return "pcie_gbs";
  if ((from == Tier::Nvme || to == Tier::Nvme) && nvmeBandwidth(to == Tier::Nvme) <= 0)
    return "nvme_gbs";
  return "";
}

double HardwareCost::messageSeconds(double bytes, int64_t nodes) const {
  Link link = hardware_.link(nodes);
  return link.latency + bytes / link.bandwidth;
}

double HardwareCost::activationMessageSeconds(int64_t nodes) const {
  return messageSeconds(model_->boundaryElements() * elementBytes(Data::Activations), nodes);
}

Number HardwareCost::length(const Work &work) const {
  return Number::real(seconds(work));
}

void HardwareCost::coalescedLengths(std::span<const Work> call, std::span<Number> lengths) const {
  // A layer's activation collective stands for its partial-sum completions (callsOf): each
  // completion of the group's is fused with the others' (the call is that many NCCL calls).
  // The first pays the call's latency (secondsBefore starts at 0): alone, it is length().
  double before = 0, secondsBefore = 0;
  for (size_t i = 0; i < call.size(); ++i) {
    const Work &w = call[i]; // (every one the same kind over the same ranks)
    double bytes = before + callBytes(w), upTo = ncclSeconds(w.kind, w.groupSize, std::max(1, w.nodes), bytes);
    lengths[i] = Number::real(callsOf(w) * (upTo - secondsBefore));
    before = bytes;
    secondsBefore = upTo;
  }
}

} // namespace schedc::cost
