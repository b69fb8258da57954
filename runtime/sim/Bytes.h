// Bytes — memory in bytes for a model of a given size and precision, next to the `puzzle`
// model's abstract units. The puzzle counts a weight as 512 x 512 units whatever its
// precision; a real run of H x H layers on T-row micro-batches holds bytes, and how many
// depends on the precision. Mixed precision is counted as ZeRO (Rajbhandari et al. 2020,
// section 3.1: 2 + 2 + K bytes per parameter, K = 12 with Adam) and Megatron-LM count it:
// the fp32 master copy of the weights is part of the optimizer state, so it is sharded
// wherever the optimizer state is.
//
//   value                 fp32        bf16 (mixed precision)
//   weight                4 per elem  2 (what the GEMMs read)
//   weight gradient       4           2, or 4 with --grad-precision=fp32 (fp32 accumulation)
//   optimizer state       4 per moment 4 (the fp32 master) + 4 per moment
//   activation, its grad  4           2
//
// (1 moment for SGD with momentum, 2 for Adam: Adam at bf16 is ZeRO's K = 12.)
//
// A weight or weight-gradient value holds |shards| / total of the H x H elements, an
// activation or activation gradient T x H elements per micro-batch.
//
// With a transformer (--model, for the hardware cost model) the layers are its layers: a
// weight-sized value of layer l holds |shards| / total of layer l's parameters; an
// activation that is the input of layer l stands for what layer l keeps for its backward,
// per micro-batch (Korthikanti et al. 2022, cost/Transformer.h; at 16 bits, twice that at
// fp32), the last layer's output for its fp32 logits (sequence x micro_batch x vocabulary /
// tensor_parallel x 4 bytes: what the vocabulary-parallel cross-entropy reads and keeps,
// Megatron-LM's output_tensor.float()), and every activation gradient for one sequence x
// micro_batch x hidden tensor per micro-batch (a checkpoint of a recomputing schedule too,
// found after the fact: sim/Recompute.h). The sim backend sums
// these over what each rank holds at the events where it samples the puzzle's memory, so
// the predicted peak bytes of a rank can be set beside what a real backend measured there.
#pragma once

#include "cost/Transformer.h"
#include "sim/Value.h"

#include <array>
#include <memory>
#include <string>

namespace schedc::sim {

enum class Precision : uint8_t { Fp32, Bf16 };
const char *precisionName(Precision p); // "fp32", "bf16"

// What the bytes a rank holds are, as a practitioner's breakdown reads them: weights,
// weight gradients, optimizer states (with the fp32 master), activations and their
// gradients, and the logits (the last layer's output under a transformer).
enum class ByteShare : uint8_t { Parameters, Gradients, OptimizerState, Activations, Logits };
constexpr int kByteShares = 5;
const char *byteShareName(ByteShare s); // "parameters", "gradients", "optimizer state", ...
const char *byteShareKey(ByteShare s);  // the same as a JSON key: "optimizer_state"
using ByteShares = std::array<double, kByteShares>;

// How a rank computes a layer, as the bytes of the activations it keeps for it depend on
// it: as one of `parts` tensor-parallel parts of the schedule's, and with its routed experts
// as a side of their own (loaded apart: the layer's input then keeps its dense part's, and the
// tokens dispatched to the experts keep the experts').
struct LayerForm {
  int64_t parts = 1;
  bool expertsApart = false;
  bool operator==(const LayerForm &) const = default;
};

struct ByteModel {
  int64_t hidden = 512;    // H
  int64_t tokens = 256;    // T, rows per micro-batch
  int optimizerStates = 1; // moments per parameter: 1 (SGD with momentum) or 2 (Adam)
  Precision precision = Precision::Fp32;
  bool fp32Gradients = false; // a bf16 run keeps (accumulates, reduces) weight gradients in fp32
  bool tf32 = false;          // fp32 values whose GEMMs run on TF32 tensor cores: only the time differs
  bool given = false;         // set on the command line: the text report shows the bytes
  // The real backends' layer as a mixture of experts (backend/Experts.h): `experts` routed
  // experts (0: as many as the slices a schedule splits a layer's experts into, one when it
  // is whole), each token's `topK` copies sent to them. Under a transformer, its own.
  int64_t experts = 0;
  int64_t topK = 1;
  std::shared_ptr<const cost::Transformer> transformer; // its layers instead of H x H ones

  // Bytes one element of a value of `kind` takes (an optimizer state: all its moments).
  int elementBytes(Kind kind) const {
    bool bf16 = precision == Precision::Bf16;
    switch (kind) {
    case Kind::Weight: return bf16 ? 2 : 4;
    case Kind::OptState: return (bf16 ? 4 : 0) + 4 * optimizerStates; // the fp32 master, then the moments
    case Kind::WeightGrad: return bf16Gradients() ? 2 : 4;
    case Kind::Activation:
    case Kind::ActGrad: return bf16 ? 2 : 4;
    }
    return 4;
  }
  // Elements of data `v` holds (of an H x H model): a mixture-of-experts layer's tokens at
  // its router or its experts are each token's top-k copies.
  double elements(const Value &v) const {
    if (v.kind == Kind::Activation || v.kind == Kind::ActGrad)
      return static_cast<double>(v.batches ? v.batches->size() : 0) * static_cast<double>(tokens) *
             static_cast<double>(hidden) * sequenceShare(v) * (isTokens(v.split) ? static_cast<double>(topK) : 1);
    // A shard is H*H/total elements (real backends need H*H to be a multiple of total). The
    // real backends' mixture-of-experts layer is all experts: its dense part (a fixed router)
    // has no weights.
    if (v.split == Split::Dense)
      return 0;
    int64_t perShard = v.total > 0 ? hidden * hidden / v.total : 0;
    return static_cast<double>(v.shards ? v.shards->size() : 0) * static_cast<double>(perShard);
  }
  // Bytes `v` takes (a double: exact to 2^53 bytes, and no overflow at any size) on a rank
  // that computes layer v.layer in `form`: a transformer's activation there is what a
  // tensor-parallel part keeps (Korthikanti et al.'s per-GPU bytes), not the whole layer's,
  // or with the experts apart what the dense part keeps. Inline: the storage counts every
  // value it holds and drops (twice an event).
  double bytes(const Value &v, LayerForm form = {}) const {
    return transformer ? transformerBytes(v, form) : elements(v) * elementBytes(v.kind);
  }
  // Under a transformer, the bytes of activation `v`'s tensor alone (what a checkpoint keeps:
  // one sequence x micro_batch x hidden tensor per micro-batch, as the loss's input), where
  // bytes() counts what its layer keeps for the backward (sim/Recompute.h).
  double tensorBytes(const Value &v) const;
  // The bytes of Megatron's main-gradient buffer a weight `v` on the device carries
  // (cost::Transformer::mainGradBuffer: fp32, for every parameter of it); 0 otherwise. Its
  // gradients on the device then take none of their own.
  double gradientBufferBytes(const Value &v) const;
  // Under a transformer, the bytes layer `layer` keeps for its backward for `microBatches`
  // micro-batches on one rank (Korthikanti et al.'s per-GPU bytes at this precision).
  double layerActivationBytes(int64_t layer, double microBatches) const;
  // The part of that the routed experts keep (cost::Transformer::routedActivationBytes).
  double routedActivationBytes(int64_t layer, double microBatches) const;
  // Under a transformer, the bytes of the last layer's output for `microBatches` micro-batches
  // of its sequence (`sequenceShare` of it): its fp32 logits, split by vocabulary among the
  // tensor-parallel accelerators (the model's `tensor_parallel` x a schedule's `layerParts`).
  double logitsBytes(double microBatches, int64_t layerParts = 1, double sequenceShare = 1) const;
  // Which share of the bytes `v` is (a weight's gradient buffer is the gradients').
  ByteShare shareOf(const Value &v) const {
    switch (v.kind) {
    case Kind::Weight: return ByteShare::Parameters;
    case Kind::WeightGrad: return ByteShare::Gradients;
    case Kind::OptState: return ByteShare::OptimizerState;
    case Kind::Activation:
      return transformer && v.layer >= transformer->layers ? ByteShare::Logits : ByteShare::Activations;
    case Kind::ActGrad: return ByteShare::Activations;
    }
    return ByteShare::Activations;
  }
  // Whether weight gradients are bf16 (a bf16 run without --grad-precision=fp32).
  bool bf16Gradients() const { return precision == Precision::Bf16 && !fp32Gradients; }
  // "hidden 512, tokens 256, fp32, 1 optimizer state" ("bf16 with fp32 gradients"; a
  // transformer's name instead of hidden and tokens).
  std::string describe() const;

private:
  // The share of an activation a value holds: its sequence shards of the sequence (sequence
  // parallelism), its share of the dispatch group's tokens (at the experts, balanced
  // routing), or all of it.
  static double sequenceShare(const Value &v) {
    if (atExperts(v.split))
      return 1 / static_cast<double>(v.total);
    return v.split == Split::Sequence ? static_cast<double>(v.shards->size()) / static_cast<double>(v.total) : 1;
  }
  double transformerBytes(const Value &v, LayerForm form) const;
  // Bytes of `copies` copies of a micro-batch's boundary tensor (tokens sent to experts).
  double tokenCopiesBytes(const Value &v, double copies) const;
  // A weight-sized value's own bytes under a transformer: its share of its layer's
  // parameters on this rank, at its kind's precision.
  double weightShareBytes(const Value &v) const;
};

// The option `arg` sets, if it is one of the model's ("--hidden" of "--hidden=64"), else "".
std::string byteModelFlag(const std::string &arg);

// Reads one of the model's options (--hidden, --tokens, --optimizer, --precision (fp32,
// tf32, bf16), --grad-precision) into
// `m`. Returns false if `flag` is not one of them; sets `error` if its value is bad.
bool parseByteModelOption(const std::string &flag, const std::string &value, ByteModel &m, std::string &error);

// The help lines of those options, for the usage texts of schedc and compiled programs.
extern const char *const kByteModelHelp;

// "12582912 bytes (12.0 MiB)".
std::string bytesText(double bytes);
// "359.49 GiB" (2^30 bytes): the unit an accelerator's "80 GB" is in (80 GiB), and
// PyTorch's and nvidia-smi's.
std::string gibibytes(double bytes);

} // namespace schedc::sim
