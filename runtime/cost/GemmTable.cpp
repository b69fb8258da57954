// GemmTable implementation: the clamp into the measured box, then trilinear or
// inverse-distance interpolation of log(rate) inside it.
#include "cost/GemmTable.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

namespace schedc::cost {

namespace {

// The sizes a dimension takes among the points, ascending.
template <class Get> std::vector<double> axis(const std::vector<GemmPoint> &points, Get get) {
  std::set<double> values;
  for (const GemmPoint &p : points)
    values.insert(get(p));
  return {values.begin(), values.end()};
}

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

double GemmTable::rate(double batch, double m, double n, double k) const {
  double rows = batch * m;
  auto within = [&](double v, auto get) {
    auto [low, high] = std::minmax_element(points_.begin(), points_.end(),
                                           [&](const GemmPoint &a, const GemmPoint &b) { return get(a) < get(b); });
    return std::clamp(v, get(*low), get(*high));
  };
  double cm = within(rows, [](const GemmPoint &p) { return p.m; });
  double cn = within(n, [](const GemmPoint &p) { return p.n; });
  double ck = within(k, [](const GemmPoint &p) { return p.k; });
  return insideRate(cm, cn, ck);
}

double GemmTable::insideRate(double m, double n, double k) const {
  bool found = false;
  double r = trilinear(m, n, k, found);
  return found ? r : inverseDistance(m, n, k);
}

double GemmTable::trilinear(double m, double n, double k, bool &found) const {
  std::array<Bracket, 3> b{bracket(axis(points_, [](const GemmPoint &p) { return p.m; }), m),
                           bracket(axis(points_, [](const GemmPoint &p) { return p.n; }), n),
                           bracket(axis(points_, [](const GemmPoint &p) { return p.k; }), k)};
  double logRate = 0;
  for (int corner = 0; corner < 8; ++corner) {
    std::array<double, 3> at;
    double weight = 1;
    for (int d = 0; d < 3; ++d) {
      bool high = (corner >> d) & 1;
      at[d] = high ? b[d].high : b[d].low;
      weight *= high ? b[d].at : 1 - b[d].at;
    }
    if (weight == 0)
      continue;
    if (weight == 1) { // on a point of the grid: its own rate, exactly
      auto exact = std::find_if(points_.begin(), points_.end(),
                                [&](const GemmPoint &p) { return p.m == at[0] && p.n == at[1] && p.k == at[2]; });
      found = exact != points_.end();
      return found ? exact->flopsPerSecond : 0;
    }
    auto point = std::find_if(points_.begin(), points_.end(),
                              [&](const GemmPoint &p) { return p.m == at[0] && p.n == at[1] && p.k == at[2]; });
    if (point == points_.end()) {
      found = false;
      return 0;
    }
    logRate += weight * std::log(point->flopsPerSecond);
  }
  found = true;
  return std::exp(logRate);
}

double GemmTable::inverseDistance(double m, double n, double k) const {
  double weights = 0, logRate = 0;
  for (const GemmPoint &p : points_) {
    double dm = std::log2(m / p.m), dn = std::log2(n / p.n), dk = std::log2(k / p.k);
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
