// Experts implementation: the fixed router's rule, and the masks that restrict a row's
// inner units to its experts'.
#include "backend/Experts.h"

#include <algorithm>
#include <numeric>

namespace schedc::backend {

std::vector<Routing::Copy> Routing::copiesTo(int64_t slice, int64_t slices) const {
  std::vector<Copy> copies;
  if (slices < 1 || experts % slices != 0) // not slices of whole experts: none routed (routingOf says why)
    return copies;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < topK; ++j)
      if (int64_t e = expertOf(t, j); sliceOf(e, slices) == slice)
        copies.push_back(Copy{t, j, e});
  return copies;
}

namespace {
// Sets row `row`'s units of `expert` that lie in [first, first + count) to 1.
void markExpert(std::vector<float> &mask, const Routing &r, int64_t row, int64_t expert, int64_t first, int64_t count) {
  int64_t begin = std::max(expert * r.unitsPerExpert(), first);
  int64_t end = std::min((expert + 1) * r.unitsPerExpert(), first + count);
  for (int64_t u = begin; u < end; ++u)
    mask[static_cast<size_t>(row * count + u - first)] = 1.0f;
}
} // namespace

std::vector<float> Routing::wholeMask(int64_t rows, int64_t first, int64_t count) const {
  std::vector<float> mask(static_cast<size_t>(rows * count), 0.0f);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t j = 0; j < topK; ++j)
      markExpert(mask, *this, row, expertOf(row % tokens, j), first, count);
  return mask;
}

std::vector<float> Routing::copiesMask(const std::vector<Copy> &copies, int64_t rows, int64_t first,
                                       int64_t count) const {
  std::vector<float> mask(static_cast<size_t>(rows * count), 0.0f);
  for (int64_t row = 0; row < rows && !copies.empty(); ++row)
    markExpert(mask, *this, row, copies[static_cast<size_t>(row) % copies.size()].expert, first, count);
  return mask;
}

std::vector<std::vector<int64_t>> dispatchRows(const Routing &r, int64_t slices, int64_t batches, bool copied) {
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(slices));
  for (int64_t s = 0; s < slices; ++s)
    for (int64_t b = 0; b < batches; ++b)
      for (const Routing::Copy &c : r.copiesTo(s, slices))
        rows[static_cast<size_t>(s)].push_back(copied ? (b * r.tokens + c.token) * r.topK + c.choice
                                                      : b * r.tokens + c.token);
  return rows;
}

std::vector<std::vector<int64_t>> combineRows(const Routing &r, int64_t slices, int64_t batches) {
  return dispatchRows(r, slices, batches, true); // each copy comes back to where it left
}

RoutingOrError routingOf(const Dims &d, int64_t layer, int64_t slices) {
  Routing r{
      .experts = d.experts > 0 ? d.experts : slices, .topK = d.topK, .tokens = d.tokens, .units = innerUnits(d.hidden)};
  const std::string n = std::to_string(r.experts), of = "layer " + std::to_string(layer) + "'s ";
  if (r.experts % slices != 0)
    return {r, "the " + n + " experts (--experts) do not split into " + std::to_string(slices) +
                   " slices of whole experts"};
  if (r.units % r.experts != 0)
    return {r, of + std::to_string(r.units) + " inner units (--hidden / 2) do not divide among its " + n +
                   " experts; give --hidden a multiple of " + std::to_string(2 * r.experts)};
  if (slices > 1 && (r.tokens * r.topK) % r.experts != 0)
    return {r, "the fixed router sends a micro-batch's " + std::to_string(r.tokens) + " x " + std::to_string(r.topK) +
                   " token copies evenly to " + of + n +
                   " experts only when they are a multiple of it; give --tokens a multiple of " +
                   std::to_string(r.experts / std::gcd(r.experts, r.topK))};
  return {r, ""};
}

} // namespace schedc::backend
