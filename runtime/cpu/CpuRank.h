// CpuRank — the real arithmetic of the one rank this MPI process runs. The sim backend still
// runs every rank's schedule (checks, clocks, the cost model); for this process's rank,
// each operation's result comes back here with its operands, and CpuRank computes the data
// (tensors) and attaches it to the value: load makes the initial weight shard and a zero
// optimizer state, forward/backward/loss run the model, update steps the optimizer on the
// weight's slice, collectives and send/recv move the data over MPI. Memory is then counted
// from the data itself (sim::Value::payloadElements).
#pragma once

#include "cpu/Comm.h"
#include "cpu/Kernels.h"
#include "sim/World.h"

#include <string>

namespace schedc::cpu {

class CpuRank {
public:
  CpuRank(const Dims &dims, const Optimizer &optimizer, Comm &comm) : d_(dims), o_(optimizer), comm_(comm) {}

  sim::ValuePtr loadWeight(const sim::ValuePtr &meta);
  sim::ValuePtr loadOptState(const sim::ValuePtr &meta);
  sim::ValuePtr input(const sim::ValuePtr &meta);
  sim::ValuePtr forward(const sim::ValuePtr &meta, const sim::ValuePtr &input, const sim::ValuePtr &weight);
  // Computes the results `part` asks for (both, or one half of a split backward; the other
  // comes back as its metadata without data).
  std::pair<sim::ValuePtr, sim::ValuePtr> backward(const std::pair<sim::ValuePtr, sim::ValuePtr> &meta,
                                                   const sim::ValuePtr &input, const sim::ValuePtr &grad,
                                                   const sim::ValuePtr &weight, sim::Rank::BackwardPart part);
  sim::ValuePtr loss(const sim::ValuePtr &meta, const sim::ValuePtr &input);
  std::pair<sim::ValuePtr, sim::ValuePtr> update(const std::pair<sim::ValuePtr, sim::ValuePtr> &meta,
                                                 const sim::ValuePtr &grad, const sim::ValuePtr &weight,
                                                 const sim::ValuePtr &opt);
  sim::ValuePtr addGrad(const sim::ValuePtr &meta, const sim::ValuePtr &a, const sim::ValuePtr &b);
  sim::ValuePtr fakeGrad(const sim::ValuePtr &meta);
  // The slice of `whole` (a complete weight, gradient or optimizer state) that `meta` names.
  sim::ValuePtr shardOf(const sim::ValuePtr &meta, const sim::ValuePtr &whole);
  sim::ValuePtr collective(const sim::ValuePtr &meta, sim::CollectiveKind kind, const sim::ValuePtr &v,
                           const sim::IntSet &members);
  void send(int64_t to, int64_t tag, const sim::ValuePtr &v);
  sim::ValuePtr recv(const sim::ValuePtr &meta, int64_t from, int64_t tag);

  // After the run: every rank sends the updated weights it holds to rank 0, which writes
  // DIR/layer_<l>.npy (H x H float32) for every layer into a new DIR (atomically: a
  // temporary directory, then a rename). Returns an error message, or empty.
  std::string writeFinalWeights(const sim::Rank &rank, int64_t layers, const std::string &dir);

private:
  int64_t weightElements() const { return d_.weightElements(); }
  // The flat range of shard `s` of `total`.
  std::pair<int64_t, int64_t> shard(int64_t s, int64_t total);

  Dims d_;
  Optimizer o_;
  Comm &comm_;
};

} // namespace schedc::cpu
