// Rank's mesh: `mesh (a = n, b = m, ...)` lays the ranks out row-major (the last axis
// varies fastest); an axis name is this rank's coordinate on it, and a group over an axis is
// the ranks that share every other coordinate.
#include "engine/World.h"

namespace schedc::sim {

bool Rank::declareMesh(SourceRange at, const std::vector<std::string> &names, const std::vector<int64_t> &sizes,
                       const std::vector<SourceRange> &sizeAt) {
  int64_t product = 1;
  std::string shape;
  for (size_t i = 0; i < sizes.size(); ++i) {
    shape += (i ? ", " : "") + names[i] + " = " + std::to_string(sizes[i]);
    if (sizes[i] < 1) {
      fatal(sizeAt[i],
            "mesh axis `" + names[i] + "` has size " + std::to_string(sizes[i]) + "; sizes must be at least 1");
      return false;
    }
    if (__builtin_mul_overflow(product, sizes[i], &product))
      product = INT64_MAX;
  }
  if (product != world_.model_.ranks) {
    fatal(at, "mesh (" + shape + ") has " + std::to_string(product) + " ranks, but the schedule runs on " +
                  std::to_string(world_.model_.ranks));
    return false;
  }
  mesh_.sizes = sizes;
  mesh_.names = names;
  mesh_.strides.assign(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i > 0; --i)
    mesh_.strides[i - 1] = mesh_.strides[i] * sizes[i];
  mesh_.axisGroups.assign(sizes.size(), nullptr);
  return true;
}

bool Rank::meshReady(SourceRange at) {
  if (!mesh_.sizes.empty())
    return true;
  // diag-coverage: unreachable (sema scopes axes from `mesh` on; a failed mesh cancels the run first)
  fatal(at, "a mesh axis is used before the mesh is declared");
  return false;
}

int64_t Rank::axisCoord(size_t axis, SourceRange at) {
  return meshReady(at) ? id_ / mesh_.strides[axis] % mesh_.sizes[axis] : 0;
}

int64_t Rank::axisSize(size_t axis, SourceRange at) {
  return meshReady(at) ? mesh_.sizes[axis] : 0;
}

int64_t Rank::rankAt(const std::vector<int64_t> &coords, SourceRange at) {
  if (!meshReady(at))
    return 0;
  int64_t rank = 0;
  for (size_t i = 0; i < coords.size() && i < mesh_.sizes.size(); ++i) {
    if (coords[i] < 0 || coords[i] >= mesh_.sizes[i]) {
      fatal(at, "rank_at: " + mesh_.names[i] + " = " + std::to_string(coords[i]) + " is off the mesh (" +
                    mesh_.names[i] + " is 0 to " + std::to_string(mesh_.sizes[i] - 1) + ")");
      return 0;
    }
    rank += coords[i] * mesh_.strides[i];
  }
  return rank;
}

SetPtr Rank::axisGroup(size_t axis, SourceRange at) {
  if (!meshReady(at))
    return world_.allRanks();
  SetPtr &cached = mesh_.axisGroups[axis];
  if (!cached)
    cached = world_.groups_.rankSet(id_ - axisCoord(axis, at) * mesh_.strides[axis], mesh_.sizes[axis],
                                    mesh_.strides[axis], world_.parallel_);
  return cached;
}

SetPtr Rank::rangeGroup(int64_t lo, int64_t hi) {
  return world_.groups_.rankSet(lo, std::max<int64_t>(0, hi - lo), 1, world_.parallel_);
}

const SetPtr &Rank::allRanks() const {
  return world_.allRanks();
}

} // namespace schedc::sim
