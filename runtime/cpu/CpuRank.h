// CpuRank — the cpu backend's ComputeRank: the real arithmetic of the one rank this MPI
// process runs, on host tensors. load makes the initial weight shard and a zero optimizer
// state, forward/backward/loss run the model (OpenBLAS GEMMs) on whole layers or their
// tensor-parallel parts, or the two sides of a mixture-of-experts layer, update steps the
// optimizer on the weight's slice, collectives and send/recv move the data over MPI
// (collectives of activations complete partial sums or join sequence shards; all-to-alls
// carry tokens to their experts and back).
#pragma once

#include "backend/Comm.h"
#include "backend/ComputeRank.h"
#include "cpu/Kernels.h"
#include "engine/Rank.h"

#include <string>

namespace schedc::cpu {

class CpuRank final : public backend::ComputeRank {
public:
  CpuRank(const backend::ComputeConfig &config, backend::Comm &comm) : ComputeRank(config, comm) {}

  ValuePtr loadWeight(const ValuePtr &meta) override;
  ValuePtr loadOptState(const ValuePtr &meta) override;
  ValuePtr input(const ValuePtr &meta) override;
  ValuePtr forward(const ValuePtr &meta, const ValuePtr &input, const ValuePtr &weight) override;
  ValuePair backward(const ValuePair &meta, const ValuePtr &input, const ValuePtr &grad, const ValuePtr &weight,
                     sim::Rank::BackwardPart part) override;
  ValuePtr loss(const ValuePtr &meta, const ValuePtr &input) override;
  ValuePair update(const ValuePair &meta, const ValuePtr &grad, const ValuePtr &weight, const ValuePtr &opt) override;
  ValuePtr addGrad(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &b) override;
  ValuePtr fakeGrad(const ValuePtr &meta) override;
  ValuePtr emptyOf(const ValuePtr &meta) override;
  ValuePtr shardOf(const ValuePtr &meta, const ValuePtr &whole) override;
  ValuePtr transfer(const ValuePtr &meta, const ValuePtr &v) override;
  ValuePtr collective(const ValuePtr &meta, CollectiveKind kind, const ValuePtr &v,
                      const sim::IntSet &members) override;
  // Over MPI (backend::Comm: non-blocking sends), the data in the Wire format.
  void send(int64_t to, int64_t tag, const ValuePtr &v) override;
  ValuePtr recv(const ValuePtr &meta, int64_t from, int64_t tag) override;
  std::string stats() override;

protected:
  backend::HostData toHost(const ValuePtr &v) override;

private:
  // `meta` carrying `data`.
  ValuePtr fromHost(const ValuePtr &meta, backend::HostData data);
  // `meta` carrying the data, which takes its elements at the run's precision.
  ValuePtr with(const ValuePtr &meta, Flat f);
  ValuePtr with(const ValuePtr &meta, Rows r);
  ValuePtr with(const ValuePtr &meta, OptState s);
  // The inner units of a weight the GEMMs read: where their elements start, and how many.
  struct LayerWeights {
    const float *data;
    int64_t units;
  };
  LayerWeights layerWeights(const ValuePtr &w, std::vector<float> &scratch);
  // A mixture-of-experts layer (cpu/CpuExperts.cpp, backend/Experts.h). The router (the dense part, without weights):
  // each row's top-k copies, and back their gradients' sum.
  ValuePtr routerForward(const ValuePtr &meta, const ValuePtr &a);
  ValuePair routerBackward(const ValuePair &meta, const ValuePtr &g, sim::Rank::BackwardPart part);
  // An all-to-all: tokens (or their gradients) out to the experts, or back from them.
  ValuePtr exchangeTokens(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group);
  // Each of `rows` rows' top-k copies (in (row, choice) order) summed, at the run's precision.
  std::vector<float> sumOfCopies(const std::vector<float> &copies, int64_t rows);
  // The collectives of weights, their gradients and optimizer state (flat elements).
  Flat gatherShards(const Flat *in, const std::vector<int64_t> &group);
  Flat allReduce(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group);
  Flat reduceScatter(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group);
  // The collectives of activations: all-reduce and reduce-scatter of tensor-parallel partial
  // sums, all-gather of sequence shards.
  Rows allReducePartialSums(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group);
  Rows reduceScatterPartialSums(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group);
  ValuePtr gatherSequenceShards(const ValuePtr &meta, const ValuePtr &v, const std::vector<int64_t> &group);
};

} // namespace schedc::cpu
