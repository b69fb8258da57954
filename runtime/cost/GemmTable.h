// GemmTable — how fast a machine runs a GEMM of a given shape: measured points (m, n, k,
// FLOP/s) of one precision, and the rate of any other shape read off them.
//   Inside the box the points span (per dimension, their least and greatest sizes), the
//   rate is interpolated in log space: trilinear over the cell of the points' grid that
//   holds the shape when the table has its eight corners (a sweep over a grid, as
//   `--calibrate` and scripts/gpu-check.sh write), else inverse-distance weighted (power 2)
//   over every point (a table of scattered shapes). A shape at a point gets its rate.
//   Outside the box the shape is clamped into it first: bigger than any measured shape, the
//   rate stays at the edge's (the GEMM is saturated); smaller, at the smallest measured
//   shape's, and the roofline (Hardware::gemmRate) caps it where memory binds.
// A batched GEMM (b products of m x n x k) is looked up as one of b·m rows.
// Every point's sizes and rate are positive (invalid() says which is not).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::cost {

struct GemmPoint {
  double m = 0, n = 0, k = 0;
  double flopsPerSecond = 0;
};

class GemmTable {
public:
  GemmTable() = default;
  explicit GemmTable(std::vector<GemmPoint> points);

  bool empty() const { return points_.empty(); }
  const std::vector<GemmPoint> &points() const { return points_; }
  // FLOP/s of `batch` GEMMs of m x n x k (not empty()).
  double rate(double batch, double m, double n, double k) const;
  // The first problem with the points ("point 3: k is 0; ..."), or "".
  std::string invalid() const;

private:
  using Shape = std::array<double, 3>; // m, n, k
  double insideRate(const Shape &shape) const;
  std::optional<double> trilinear(const Shape &shape) const; // none: a corner is missing
  double inverseDistance(const Shape &shape) const;

  std::vector<GemmPoint> points_;
  // Derived from the points once: each dimension's sizes, ascending, and the rate by shape.
  std::array<std::vector<double>, 3> axes_;
  std::map<Shape, double> rates_;
};

} // namespace schedc::cost
