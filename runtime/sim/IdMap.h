// IdMap — a map from nonzero 32-bit ids to small values, for ids handed out in order (slot
// ids: SlotDirectory.h). The ids of one stretch are kept in a dense window, by id minus the
// window's first, so ids used one after the other sit side by side; an id that would leave
// the window more than 3/4 empty goes to an open-addressing table instead (linear probing,
// Fibonacci hashing). A rank's storage keeps the places of its slots here by the ids that
// every rank shares: a data-parallel rank names every id (all in the window), a pipeline's
// rank one stretch in several (the rest hashed). Entries are never removed, as a freed slot
// keeps its place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace schedc::sim {

template <class V> class IdMap {
public:
  // The value of `id` (nonzero), or null.
  const V *find(uint32_t id) const {
    if (uint32_t offset = id - base_; offset < window_.size()) // wraps below base_
      return window_[offset].id == id ? &window_[offset].value : nullptr;
    if (hashed_.empty())
      return nullptr;
    for (size_t i = home(id);; i = (i + 1) & mask()) {
      if (hashed_[i].id == id)
        return &hashed_[i].value;
      if (hashed_[i].id == 0)
        return nullptr;
    }
  }
  V *find(uint32_t id) { return const_cast<V *>(std::as_const(*this).find(id)); }
  // The value of `id` (nonzero), added as V{} if it had none.
  V &findOrAdd(uint32_t id) {
    if (V *v = find(id))
      return *v;
    if (Cell *c = windowCell(id)) {
      c->id = id;
      ++inWindow_;
      return c->value;
    }
    Cell &c = hashedCell(id);
    c.id = id;
    ++hashedUsed_;
    return c.value;
  }
  size_t size() const { return inWindow_ + hashedUsed_; }

private:
  struct Cell {
    uint32_t id = 0; // 0: empty
    V value{};
  };
  // The window may span this many cells for each it holds, and kSlack more.
  static constexpr size_t kCellsPerUse = 4, kSlack = 16;

  // The window's cell for `id`, growing the window (by as much again as it spans) to cover
  // it; null if that would make it too sparse.
  Cell *windowCell(uint32_t id) {
    if (window_.empty())
      base_ = id;
    uint64_t lo = std::min<uint64_t>(base_, id), hi = std::max<uint64_t>(uint64_t{base_} + window_.size(), id + 1ull);
    uint64_t most = kCellsPerUse * (inWindow_ + 1) + kSlack;
    if (hi - lo > most)
      return nullptr;
    if (hi - lo > window_.size()) {
      uint64_t grown = std::min<uint64_t>(most, std::max<uint64_t>(hi - lo, 2 * window_.size()));
      if (id < base_)
        lo = hi > grown ? std::max<uint64_t>(1, hi - grown) : 1; // at most id: grown >= hi - id
      else
        hi = std::min<uint64_t>(lo + grown, uint64_t{1} << 32);
      std::vector<Cell> cells(hi - lo);
      for (Cell &c : window_)
        if (c.id != 0)
          cells[c.id - lo] = std::move(c);
      window_ = std::move(cells);
      base_ = static_cast<uint32_t>(lo);
      takeIntoWindow();
    }
    return &window_[id - base_];
  }
  // Moves the hashed entries the window now covers into it (find looks in one place only).
  void takeIntoWindow() {
    if (hashedUsed_ == 0)
      return;
    std::vector<Cell> old = std::exchange(hashed_, {});
    hashedUsed_ = 0;
    for (Cell &c : old)
      if (c.id != 0) {
        if (uint32_t offset = c.id - base_; offset < window_.size()) {
          window_[offset] = std::move(c);
          ++inWindow_;
        } else {
          Cell &into = hashedCell(c.id);
          into = std::move(c);
          ++hashedUsed_;
        }
      }
  }
  // An empty hashed cell for `id` (not there yet), the table doubled first once it would be
  // more than 7/8 full. A hashed map is a rank whose ids interleave with every other rank's
  // (16 384 ranks of stdlib hybrid, some 200 slots each): at half full it was the largest of
  // a rank's allocations, 8 KiB; linear probing stays within a line or two up to 7/8 for ids
  // that are there, which are nearly all a rank looks up.
  Cell &hashedCell(uint32_t id) {
    if (8 * (hashedUsed_ + 1) > 7 * hashed_.size())
      rehash(hashed_.empty() ? 16 : 2 * hashed_.size());
    size_t i = home(id);
    while (hashed_[i].id != 0)
      i = (i + 1) & mask();
    return hashed_[i];
  }
  void rehash(size_t cells) {
    std::vector<Cell> old = std::exchange(hashed_, std::vector<Cell>(cells));
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cells));
    for (Cell &c : old)
      if (c.id != 0) {
        size_t i = home(c.id);
        while (hashed_[i].id != 0)
          i = (i + 1) & mask();
        hashed_[i] = std::move(c);
      }
  }
  size_t mask() const { return hashed_.size() - 1; }
  size_t home(uint32_t id) const { return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_); }

  uint32_t base_ = 0;
  std::vector<Cell> window_; // the cells of ids base_ .. base_ + size - 1
  size_t inWindow_ = 0;
  std::vector<Cell> hashed_; // a power of two of them, or none
  size_t hashedUsed_ = 0;
  unsigned shift_ = 64;
};

} // namespace schedc::sim
