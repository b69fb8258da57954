// Experts — the real backends' mixture-of-experts layer and its fixed router. A layer
// y = tanh(x W1) W2 of I inner units (backend/Tensors.h) is N experts: expert e is the
// units [e I/N, (e+1) I/N), a flat slice of the weight as a tensor-parallel part is, so the
// layer's output for a row is the sum over the row's experts of tanh(x W1[:, e]) W2[e, :]
// (gate 1). The router has no weights: row t of a micro-batch goes to experts
// (t k + j) mod N, j = 0 .. k-1 (k = top-k <= N, so they are distinct), and with T k a
// multiple of N every expert gets T k / N rows of each micro-batch — balanced routing, as
// the cost model assumes (docs/costs.md "Mixture of experts"). A whole layer computes it as
// the dense block with each row's h masked to its experts' units. Split around its
// all-to-alls (docs/language.md "Experts"): the router's output holds each row's k copies
// in (row, choice) order; slice s of n holds experts [s N/n, (s+1) N/n) and receives, from
// each member of the group in turn, that member's micro-batches' copies routed to it, each
// micro-batch in the same order (copiesTo), which is how the receiver knows each row's
// expert without being told.
#pragma once

#include "backend/Tensors.h"

#include <string>
#include <vector>

namespace schedc::backend {

struct Routing {
  int64_t experts = 1; // N
  int64_t topK = 1;    // k
  int64_t tokens = 1;  // T, rows of a micro-batch
  int64_t units = 1;   // I, the layer's inner units

  int64_t expertOf(int64_t token, int64_t choice) const { return (token * topK + choice) % experts; }
  int64_t unitsPerExpert() const { return units / experts; }
  // The slice of `slices` that holds expert `expert`.
  int64_t sliceOf(int64_t expert, int64_t slices) const { return expert / (experts / slices); }

  struct Copy {
    int64_t token, choice, expert;
  };
  // One micro-batch's token copies routed to slice `slice` of `slices`, in (token, choice)
  // order (none where `slices` does not divide the experts); and how many that is, the same
  // for every slice where routingOf takes the split (balanced routing: T k / slices).
  std::vector<Copy> copiesTo(int64_t slice, int64_t slices) const;
  int64_t copiesPerSlice(int64_t slices) const { return tokens * topK / slices; }
  // Masks of rows x `count` units from unit `first` (1 where the row's experts hold the unit,
  // else 0): for whole rows (row r is token r mod T, with its k experts), and for rows of
  // copies (row r is copies[r mod copies.size()], with its one expert).
  std::vector<float> wholeMask(int64_t rows, int64_t first, int64_t count) const;
  std::vector<float> copiesMask(const std::vector<Copy> &copies, int64_t rows, int64_t first, int64_t count) const;
};

// An all-to-all of tokens among the `slices` members of a group, as row indices (rows of H
// elements), the same for every backend. Out to the experts: for each member s, the rows of
// this member's input that go to slice s, in the order sent — its `batches` micro-batches'
// copies when `copied` (the router's output: each row's k copies in (row, choice) order),
// else its whole rows, each copied where a copy goes (the gradient of a layer's output).
// Back from the experts: for each member s, where in this member's `batches` micro-batches'
// copies (in (row, choice) order) the rows that come from slice s go, in the order they come.
std::vector<std::vector<int64_t>> dispatchRows(const Routing &r, int64_t slices, int64_t batches, bool copied);
std::vector<std::vector<int64_t>> combineRows(const Routing &r, int64_t slices, int64_t batches);

// The routing of a layer whose routed experts are split into `slices` (1: loaded whole):
// --experts, or one expert a slice when it is not given; and what keeps the real layer from
// it ("" when nothing does).
struct RoutingOrError {
  Routing routing;
  std::string error;
};
RoutingOrError routingOf(const Dims &d, int64_t layer, int64_t slices);

} // namespace schedc::backend
