// GemmTable implementation: the clamp into the measured box, then trilinear or
// inverse-distance interpolation of log(rate) inside it.
#include "cost/GemmTable.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

namespace schedc::cost {

namespace {

// The two axis values around `v` (equal when v is one) and v's place between them in log
// space, 0 .. 1.
struct Bracket {
  double low, high, at;
};
Bracket bracket(const std::vector<double> &values, double v) {
  auto above = std::lower_bound(values.begin(), values.end(), v);
  if (above == values.end())
    return {values.back(), values.back(), 0};
  if (*above == v || above == values.begin())
    return {*above, *above, 0};
  double low = *(above - 1), high = *above;
  return {low, high, std::log(v / low) / std::log(high / low)};
}

} // namespace

GemmTable::GemmTable(std::vector<GemmPoint> points) : points_(std::move(points)) {
  std::array<std::set<double>, 3> sizes;
  for (const GemmPoint &p : points_) {
    Shape shape{p.m, p.n, p.k};
    for (size_t d = 0; d < 3; ++d)
      sizes[d].insert(shape[d]);
    rates_.emplace(shape, p.flopsPerSecond);
  }
  for (size_t d = 0; d < 3; ++d)
    axes_[d].assign(sizes[d].begin(), sizes[d].end());
}

double GemmTable::rate(double batch, double m, double n, double k) const {
  Shape shape{batch * m, n, k};
  for (size_t d = 0; d < 3; ++d) // into the measured box
    shape[d] = std::clamp(shape[d], axes_[d].front(), axes_[d].back());
  return insideRate(shape);
}

double GemmTable::insideRate(const Shape &shape) const {
  std::optional<double> r = trilinear(shape);
  return r ? *r : inverseDistance(shape);
}

std::optional<double> GemmTable::trilinear(const Shape &shape) const {
  std::array<Bracket, 3> b;
  for (size_t d = 0; d < 3; ++d)
    b[d] = bracket(axes_[d], shape[d]);
  double logRate = 0;
  for (int corner = 0; corner < 8; ++corner) {
    Shape at;
    double weight = 1;
    for (size_t d = 0; d < 3; ++d) {
      bool high = (corner >> d) & 1;
      at[d] = high ? b[d].high : b[d].low;
      weight *= high ? b[d].at : 1 - b[d].at;
    }
    if (weight == 0)
      continue;
    auto point = rates_.find(at);
    if (point == rates_.end())
      return std::nullopt;
    if (weight == 1) // on a point of the grid: its own rate, exactly
      return point->second;
    logRate += weight * std::log(point->second);
  }
  return std::exp(logRate);
}

double GemmTable::inverseDistance(const Shape &shape) const {
  double weights = 0, logRate = 0;
  for (const GemmPoint &p : points_) {
    double dm = std::log2(shape[0] / p.m), dn = std::log2(shape[1] / p.n), dk = std::log2(shape[2] / p.k);
    double distance2 = dm * dm + dn * dn + dk * dk;
    if (distance2 == 0)
      return p.flopsPerSecond;
    weights += 1 / distance2;
    logRate += std::log(p.flopsPerSecond) / distance2;
  }
  return std::exp(logRate / weights);
}

std::string GemmTable::invalid() const {
  for (size_t i = 0; i < points_.size(); ++i) {
    const GemmPoint &p = points_[i];
    struct Field {
      const char *name;
      double value;
    };
    for (Field f : {Field{"m", p.m}, Field{"n", p.n}, Field{"k", p.k}, Field{"TFLOP/s", p.flopsPerSecond}})
      if (!(f.value > 0) || !std::isfinite(f.value))
        return "point " + std::to_string(i + 1) + ": " + f.name + " must be greater than 0";
  }
  return "";
}

} // namespace schedc::cost
