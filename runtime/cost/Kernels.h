// Kernels — what one pass of a layer over one micro-batch launches on one rank, as the
// hardware cost model times it: GEMMs by their shape (cost/GemmTable.h), fused attention
// by its FLOPs, and memory-bound kernels (element-wise, normalization, softmax, dropout,
// residual adds, cross-entropy, gradient accumulation) by the bytes they read and write.
// A layer model lists them (cost/LayerModel.h) for each pass: the forward, a whole
// backward, either half of a split one, and the loss's gradient (where a model does not
// compute it inside its last layer).
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

namespace schedc::cost {

enum class Pass : uint8_t { Forward, Backward, BackwardInput, BackwardWeight, Loss };

struct Kernel {
  enum class Kind : uint8_t { Gemm, Attention, Memory };
  Kind kind = Kind::Memory;
  const char *name = "";
  // Gemm: `batch` products of m x n x k (2·batch·m·n·k FLOPs). Attention: the shape of
  // one of its products (QKᵀ), for a machine without an attention efficiency of its own.
  double batch = 1, m = 0, n = 0, k = 0;
  double flops = 0;    // Attention: the FLOPs the kernel executes
  double bytes = 0;    // Memory: read + written
  double elements = 0; // Memory: elements it writes (for a machine's element-wise rate)

  static Kernel gemm(const char *name, double batch, double m, double n, double k) {
    return {Kind::Gemm, name, batch, m, n, k, 2 * batch * m * n * k, 0, 0};
  }
  static Kernel attention(const char *name, double batch, double m, double n, double k, double flops) {
    return {Kind::Attention, name, batch, m, n, k, flops, 0, 0};
  }
  static Kernel memory(const char *name, double bytes, double elements) {
    return {Kind::Memory, name, 1, 0, 0, 0, 0, bytes, elements};
  }
};

// The share of a layer a rank computes, where the schedule splits it: 1 / `parts` of its
// tensor-parallel part, and with `sequence` the norms, dropout and residual adds on 1 /
// `parts` of the sequence (sequence parallelism spelled in the schedule); and of a
// mixture-of-experts layer split around its all-to-alls, one side: the dense part, or the
// routed experts of a rank of an expert-parallel group of `dispatch`, which compute the
// group's `microBatches` micro-batches' tokens routed to them at once (grouped GEMMs over
// the dispatch buffer; their kernels are for all of them, not per micro-batch).
enum class LayerHalf : uint8_t { Whole, Dense, Experts };
struct LayerShare {
  int64_t parts = 1;
  bool sequence = false;
  LayerHalf half = LayerHalf::Whole;
  int64_t dispatch = 1;
  int64_t microBatches = 1;
  auto operator<=>(const LayerShare &) const = default;
};

// Bytes of one element: of activations (and their gradients), and of weight gradients.
struct ElementSizes {
  double activation = 2;
  double gradient = 2;
};

using KernelList = std::vector<Kernel>;

} // namespace schedc::cost
