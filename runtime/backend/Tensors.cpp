// Tensors implementation: pieces of flat arrays and the data generator (splitmix64 over
// (seed, stream, index), mapped to [-scale, scale)).
#include "backend/Tensors.h"

#include <cmath>

namespace schedc::backend {

int64_t Flat::elements() const {
  int64_t n = 0;
  for (const Piece &p : pieces)
    n += static_cast<int64_t>(p.values.size());
  return n;
}

std::vector<float> Flat::whole(int64_t n) const {
  return range(0, n);
}

std::vector<float> Flat::range(int64_t begin, int64_t count) const {
  std::vector<float> out(static_cast<size_t>(count));
  for (const Piece &p : pieces) {
    int64_t lo = std::max(begin, p.begin), hi = std::min(begin + count, p.begin + int64_t(p.values.size()));
    for (int64_t i = lo; i < hi; ++i)
      out[static_cast<size_t>(i - begin)] = p.values[static_cast<size_t>(i - p.begin)];
  }
  return out;
}

bool Flat::covers(int64_t begin, int64_t count) const {
  int64_t held = 0; // the pieces are disjoint
  for (const Piece &p : pieces)
    held +=
        std::max<int64_t>(0, std::min(begin + count, p.begin + int64_t(p.values.size())) - std::max(begin, p.begin));
  return held == count;
}

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A value in [-scale, scale) for element `i` of stream (kind, index).
float uniform(const Dims &d, uint64_t kind, uint64_t index, uint64_t i, float scale) {
  uint64_t h = mix(mix(mix(d.seed) ^ kind) ^ index) ^ i;
  double u = static_cast<double>(mix(h) >> 11) * (1.0 / 9007199254740992.0); // [0, 1)
  return static_cast<float>((2 * u - 1) * scale);
}

} // namespace

float initialWeightScale(const Dims &d, int64_t element) {
  bool first = element % (2 * d.hidden) < d.hidden; // W1's column of the unit, or W2's row
  double fanIn = first ? static_cast<double>(d.hidden) : static_cast<double>(d.hidden) / 2;
  return static_cast<float>(std::sqrt(3.0 / fanIn));
}

std::vector<float> initialWeight(const Dims &d, int64_t layer, int64_t begin, int64_t count) {
  std::vector<float> w(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float scale = initialWeightScale(d, begin + i);
    w[static_cast<size_t>(i)] = uniform(d, 1, static_cast<uint64_t>(layer), static_cast<uint64_t>(begin + i), scale);
  }
  return w;
}

std::vector<float> inputRows(const Dims &d, int64_t batch) {
  std::vector<float> x(static_cast<size_t>(d.tokens * d.hidden));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = uniform(d, 2, static_cast<uint64_t>(batch), i, 1.0f);
  return x;
}

std::vector<float> targetRows(const Dims &d, int64_t batch) {
  std::vector<float> y(static_cast<size_t>(d.tokens * d.hidden));
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = uniform(d, 3, static_cast<uint64_t>(batch), i, 0.5f);
  return y;
}

} // namespace schedc::backend
