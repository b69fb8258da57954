// DenseWindow — the cells of a run of integer coordinates, base .. base + size - 1, in one
// vector: finding a coordinate's cell is a subtraction and a compare. The window grows to
// cover a new coordinate only while it stays dense enough (at most `cellsPerUse` cells for
// each its owner has filled, and `slack` more), and either way by as much again as it
// spans, so a loop naming one coordinate past the last each time (downward: every backward
// pass) grows it O(log n) times rather than once per step. What does not fit, its owner
// keeps elsewhere (a hash map: NearMap below). Used for the tables of slot names
// (SlotDirectory) and a rank's slot places (IdMap); through NearMap for a rank's counts of
// activations per micro-batch (Storage) and its updated layers (Rank).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace schedc::sim {

template <class T> class DenseWindow {
public:
  // The cell of `coord`, or null outside the window.
  T *find(int64_t coord) {
    uint64_t offset = static_cast<uint64_t>(coord) - static_cast<uint64_t>(base_); // wraps below base_
    return offset < cells_.size() ? &cells_[offset] : nullptr;
  }
  const T *find(int64_t coord) const { return const_cast<DenseWindow *>(this)->find(coord); }

  // The cell of `coord`, the window grown (new cells T{}) to cover it; null if it would then
  // span more than cellsPerUse x (used + 1) + slack cells, `used` being the cells the owner
  // has filled (or, to bound only how far it reaches, its size).
  T *cover(int64_t coord, uint64_t used, uint64_t cellsPerUse, uint64_t slack) {
    if (T *cell = find(coord))
      return cell;
    if (cells_.empty()) {
      base_ = coord;
      cells_.resize(1);
      return cells_.data();
    }
    auto size = static_cast<__int128>(cells_.size());
    __int128 lo = std::min<__int128>(base_, coord);
    __int128 hi = std::max<__int128>(base_ + size, static_cast<__int128>(coord) + 1);
    __int128 most = static_cast<__int128>(cellsPerUse) * (static_cast<__int128>(used) + 1) + slack;
    if (hi - lo > most)
      return nullptr;
    __int128 span = std::min(most, std::max(hi - lo, 2 * size)); // as much again, within the bound
    if (coord < base_) {
      lo = std::max<__int128>(hi - span, std::numeric_limits<int64_t>::min());
      cells_.insert(cells_.begin(), static_cast<size_t>(base_ - lo), T{});
      base_ = static_cast<int64_t>(lo);
    } else {
      hi = std::min<__int128>(lo + span, static_cast<__int128>(std::numeric_limits<int64_t>::max()) + 1);
      cells_.resize(static_cast<size_t>(hi - lo));
    }
    return &cells_[static_cast<size_t>(coord - base_)];
  }

  size_t size() const { return cells_.size(); }

private:
  int64_t base_ = 0;
  std::vector<T> cells_;
};

// A map from integers that are mostly close together (a rank's micro-batches, the layers it
// updates) to T: a DenseWindow that grows toward a new key at most as far again as it spans
// (and 64), the far keys in a hash map.
template <class T> class NearMap {
public:
  // The value of `key`, added as T{} if it had none.
  T &operator[](int64_t key) {
    if (T *v = window_.cover(key, window_.size(), 2, 64))
      return *v;
    return far_[key];
  }

private:
  DenseWindow<T> window_;
  std::unordered_map<int64_t, T> far_;
};

} // namespace schedc::sim
