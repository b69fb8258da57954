// Tensors — the model real backends train and its data on the host (the cpu backend keeps
// it there; the cuda backend copies to it to write the final weights). A layer is the block
// y = tanh(x W1) W2 (cpu/Kernels.h) with H x H parameters: I = H/2 inner units, unit j
// being column j of W1 (H elements) then row j of W2 (H elements). Its weight (and its
// optimizer state and weight gradient) is those H x H float32 elements, unit after unit,
// so a tensor-parallel part p of t (units [pI/t, (p+1)I/t): Megatron-LM's column split of
// W1 and row split of W2) is the flat range of the p-th of t equal slices, as a ZeRO shard
// is. A rank may hold only some of the n equal slices (shards or parts), kept as `pieces`
// of the flat array, so a slice costs its elements and nothing more. Activations and
// activation gradients are row blocks: T rows of width H per micro-batch, in ascending
// micro-batch order; a partial sum of tensor-parallel parts has the same shape, and a
// sequence shard s of t holds rows [sT/t, (s+1)T/t) of each of its micro-batches. Inputs, targets and initial
// weights are generated from (seed, index) by a counter-based generator, so every rank makes
// its own data without communication and every run makes the same data.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace schedc::backend {

// The optimizer the model trains with (both real backends run the same steps).
struct Optimizer {
  enum Kind { Sgd, Adam } kind = Sgd;
  float lr = 0.1f;                                     // Adam runs use 0.001
  float momentum = 0.9f;                               // SGD
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f; // Adam
  int moments() const { return kind == Adam ? 2 : 1; }
};

struct Dims {
  int64_t hidden = 512; // H
  int64_t tokens = 256; // T, rows per micro-batch
  uint64_t seed = 1;
  int64_t batches = 1; // B, all micro-batches (the loss is scaled by all of them)
  // Every layer a mixture of `experts` experts, each token sent to `topK` of them
  // (backend/Experts.h); 0: as many as a schedule splits a layer's experts into, and a layer
  // loaded whole is dense.
  int64_t experts = 0;
  int64_t topK = 1;
  int64_t weightElements() const { return hidden * hidden; }
};

// Part of a flat H x H array: elements [begin, begin + values.size()).
struct Piece {
  int64_t begin = 0;
  std::vector<float> values;
};

// Inner units of the layer of hidden size `h`; the elements of one unit in the weight.
inline int64_t innerUnits(int64_t h) {
  return h / 2;
}
inline int64_t unitElements(int64_t h) {
  return 2 * h;
}

// Weights, optimizer states and weight gradients: pieces sorted by begin, disjoint.
struct Flat {
  std::vector<Piece> pieces;
  int64_t elements() const;
  // True if the pieces cover the whole array as one piece.
  bool contiguousWhole(int64_t n) const {
    return pieces.size() == 1 && pieces[0].begin == 0 && int64_t(pieces[0].values.size()) == n;
  }
  // The whole array (the pieces must cover it).
  std::vector<float> whole(int64_t n) const;
  // Elements [begin, begin + count) (they must be held).
  std::vector<float> range(int64_t begin, int64_t count) const;
  // Whether the pieces hold every element of [begin, begin + count).
  bool covers(int64_t begin, int64_t count) const;
};

// An optimizer state: one Flat (SGD with momentum) or two (Adam: first and second moments),
// and at bf16 the fp32 master weights of the same slice (the weight itself holds bf16
// values), so the master is sharded wherever the optimizer state is, as in ZeRO.
struct OptState {
  std::vector<Flat> moments;
  Flat master; // empty at fp32
};

// Activations and activation gradients: rows x H, row-major.
struct Rows {
  int64_t rows = 0;
  std::vector<float> values;
};

// The deterministic data of a run. Initial weights are uniform in [-s, s) with
// s = sqrt(3 / fan-in), variance 1/fan-in (LeCun's; W1's fan-in is H, W2's I), so
// activations neither vanish nor blow up through many layers.
float initialWeightScale(const Dims &d, int64_t element);
std::vector<float> initialWeight(const Dims &d, int64_t layer, int64_t begin, int64_t count);
std::vector<float> inputRows(const Dims &d, int64_t batch);  // T x H
std::vector<float> targetRows(const Dims &d, int64_t batch); // T x H

} // namespace schedc::backend
