// ComputeRank — what a backend that computes for real (cpu, cuda) implements: the data of
// the one rank its process runs. The sim backend still runs every rank's schedule (checks,
// events, memory, time); for this process's rank each operation's result comes here with
// its operands, and the backend attaches real data (sim::Value::payload, with the bytes it
// takes in payloadBytes, from which memory is measured). Missing data (only possible
// when a wrong schedule is forced with --no-verify) reads as zeros. What does not depend on
// where the data lives is done here, once: the final weights, the shard layout.
#pragma once

#include "backend/Comm.h"
#include "backend/Experts.h"
#include "backend/Tensors.h"
#include "backend/Wire.h"
#include "engine/Execute.h"
#include "engine/Rank.h"

#include <optional>
#include <string>
#include <utility>

namespace schedc::backend {

// What a real backend computes: the model's size and data, the optimizer, the precision.
struct ComputeConfig {
  Dims dims; // hidden size, tokens, seed, batches
  Optimizer optimizer;
  // fp32, or bf16 mixed precision: bf16 weights, weight gradients, activations and their
  // gradients; fp32 optimizer states, which hold the fp32 master weights the optimizer
  // updates (sharded with them). `fp32Gradients`: a bf16 run's weight gradients in fp32.
  sim::Precision precision = sim::Precision::Fp32;
  bool fp32Gradients = false;
  bool tf32 = false;   // cuda, fp32: GEMMs on TF32 tensor cores
  bool overlap = true; // cuda: collectives on a stream of their own, overlapping compute
  // Every (sender, receiver) pair the schedule sends over and every group it calls
  // collectives over, from the verification run (sim::World::routes, collectiveGroups):
  // the cuda backend opens an NCCL communicator for each before it starts.
  std::vector<std::pair<int64_t, int64_t>> routes;
  std::vector<std::vector<int64_t>> groups;
};

class ComputeRank {
public:
  using ValuePtr = sim::ValuePtr;
  using ValuePair = std::pair<sim::ValuePtr, sim::ValuePtr>;
  ComputeRank(const ComputeConfig &config, Comm &comm)
      : d_(config.dims), o_(config.optimizer), precision_(config.precision), fp32Gradients_(config.fp32Gradients),
        comm_(comm) {}
  virtual ~ComputeRank() = default;

  // Gives the results of `op` (the sim backend's metadata, after its checks on `rank`) their
  // data, from the data of `operands`: the one dispatch from an operation to the virtual
  // functions below. A poisoned load or collective, or a message on an invalid route, is
  // left as it is.
  void execute(OpKind op, sim::Results &results, const sim::Operands &operands, const sim::Rank &rank);

  virtual ValuePtr loadWeight(const ValuePtr &meta) = 0;
  virtual ValuePtr loadOptState(const ValuePtr &meta) = 0;
  virtual ValuePtr input(const ValuePtr &meta) = 0;
  virtual ValuePtr forward(const ValuePtr &meta, const ValuePtr &input, const ValuePtr &weight) = 0;
  // Computes the results `part` asks for (both, or one half of a split backward; the other
  // comes back as its metadata without data).
  virtual ValuePair backward(const ValuePair &meta, const ValuePtr &input, const ValuePtr &grad, const ValuePtr &weight,
                             sim::Rank::BackwardPart part) = 0;
  virtual ValuePtr loss(const ValuePtr &meta, const ValuePtr &input) = 0;
  virtual ValuePair update(const ValuePair &meta, const ValuePtr &grad, const ValuePtr &weight,
                           const ValuePtr &opt) = 0;
  virtual ValuePtr addGrad(const ValuePtr &meta, const ValuePtr &a, const ValuePtr &b) = 0;
  virtual ValuePtr fakeGrad(const ValuePtr &meta) = 0;
  // `meta` carrying data of no elements: a mixture-of-experts layer's router has no weights,
  // so its weight, optimizer state (moments of nothing) and weight gradients are empty.
  virtual ValuePtr emptyOf(const ValuePtr &meta) = 0;
  // The slice of `whole` (a complete weight, gradient or optimizer state) that `meta` names.
  virtual ValuePtr shardOf(const ValuePtr &meta, const ValuePtr &whole) = 0;
  // An offload's or prefetch's result (`meta`, in its tier) carrying a copy of `v`'s data in
  // a buffer of that tier's (the cpu backend's own; the cuda backend refuses).
  virtual ValuePtr transfer(const ValuePtr &meta, const ValuePtr &v) = 0;
  virtual ValuePtr collective(const ValuePtr &meta, CollectiveKind kind, const ValuePtr &v,
                              const sim::IntSet &members) = 0;
  // Waits until the work enqueued so far has finished (a device runs it asynchronously), so
  // a measured time covers the work itself; a no-op where work is done when a call returns.
  virtual void settle() {}
  // The step's clock, where a device runs the work after the calls return (a call's own
  // time is then not its work's). clockStarts: every rank at once, after a barrier.
  // beforeFirstEvent: before each call of this rank until one logs an event (the step
  // begins with the last). deviceSpan: the step's work on this device, from the first
  // event's start to the end of everything enqueued so far, in seconds since clockStarts
  // (waits for it); none where the calls' own times are the work's (cpu).
  virtual void clockStarts() {}
  virtual void beforeFirstEvent() {}
  virtual std::optional<std::pair<double, double>> deviceSpan() { return std::nullopt; }
  // After the run (collective): this rank's line for --stats (the backend's GEMM rate next
  // to the library's own, measured in the same run, and its communication time).
  virtual std::string stats() = 0;

  // Point-to-point, with the schedule's tag: a send never waits; a receive takes the next
  // message from `from` with `tag` and returns `meta` carrying its data.
  virtual void send(int64_t to, int64_t tag, const ValuePtr &v) = 0;
  virtual ValuePtr recv(const ValuePtr &meta, int64_t from, int64_t tag) = 0;
  // After the run (collective: every rank calls it): receives what the schedule never
  // received, so that every send completes, and waits for the work in flight.
  virtual void finish() {}
  // After the run (collective: every rank calls it): rank 0 writes DIR/layer_<l>.npy
  // (H x H float32) for every layer into a new DIR, atomically: the fp32 masters of the
  // updated optimizer states where a bf16 run holds them, else the updated weights. Returns an error message,
  // or empty.
  std::string writeFinalWeights(const sim::Rank &rank, int64_t layers, const std::string &dir, bool overwrite);

protected:
  // The routing of a layer whose experts are split into `slices` (1: whole); ends the job
  // when the real layer cannot be routed so.
  Routing routing(int64_t layer, int64_t slices);
  // The rows activation (or gradient) `v` holds: T a micro-batch, each token's top-k copies
  // at the router, the copies routed to a slice at the experts.
  int64_t rowCount(const ValuePtr &v);
  // Each member's micro-batch count (this one's `batches`) times `perBatch`: the rows an
  // all-to-all of tokens moves to or from each member of `group`. Collective over it (MPI).
  std::vector<int64_t> rowsOfMembers(const std::vector<int64_t> &group, int64_t batches, int64_t perBatch);
  // The mask (rows x units, backend/Experts.h) that keeps the `rows` rows of input `a` to
  // their experts' units of weight `w`, or none (empty) where the layer is dense.
  std::vector<float> unitMask(const ValuePtr &w, const ValuePtr &a, int64_t rows);
  // A copy of `v`'s data on the host.
  virtual HostData toHost(const ValuePtr &v) = 0;
  // The flat range (begin, count) of shard `s` of `total` of an H x H weight; ends the job
  // when H x H is not a multiple of `total`.
  std::pair<int64_t, int64_t> shard(int64_t s, int64_t total);
  int64_t weightElements() const { return d_.weightElements(); }
  // The flat range (begin, count) a weight, optimizer state or weight gradient holds as
  // one slice (the whole, a ZeRO shard, a tensor-parallel part or a part's shard:
  // sim::singleSlice); the whole array when its shards are not one slice.
  std::pair<int64_t, int64_t> heldRange(const ValuePtr &v);
  // The same for a weight the GEMMs read (a tensor-parallel part, or the whole layer),
  // which must be whole inner units.
  std::pair<int64_t, int64_t> unitRange(const ValuePtr &w);
  // Ends the job unless the layer's inner units divide evenly among `parts`.
  void requireWholeUnits(int64_t layer, int64_t parts);
  // Rows of a micro-batch in each of `shards` sequence shards; ends the job unless they
  // divide T.
  int64_t sequenceRows(int64_t shards);
  bool bf16() const { return precision_ == sim::Precision::Bf16; }
  // Whether weight gradients are bf16 (a bf16 run without fp32 gradients).
  bool bf16Gradients() const { return bf16() && !fp32Gradients_; }
  // The bytes `elements` of a value of `kind` take at this run's precision, as sim::ByteModel
  // counts them (an optimizer state's elements are its moments' and its master's: fp32).
  int64_t bytesAtPrecision(sim::Kind kind, int64_t elements) const;

  Dims d_;
  Optimizer o_;
  sim::Precision precision_;
  bool fp32Gradients_;
  Comm &comm_;
};

} // namespace schedc::backend
