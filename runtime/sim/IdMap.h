// IdMap — a map from nonzero 32-bit ids to small values, for ids handed out in order (slot
// ids: SlotDirectory.h). The ids of one stretch are kept in a dense window, by id minus the
// window's first, so ids used one after the other sit side by side; an id that would leave
// the window more than 3/4 empty goes to an open-addressing table instead (linear probing,
// Fibonacci hashing). A rank's storage keeps the places of its slots here by the ids that
// every rank shares: a data-parallel rank names every id (all in the window), a pipeline's
// rank one stretch in several (the rest hashed). Entries are never removed, as a freed slot
// keeps its place. A window cell is the value alone: a value equal to V{} is no entry (the
// caller fills what findOrAdd hands out), so a rank's 16-byte places fill 16 bytes, four to a
// cache line, where an id beside each made them 24.
#pragma once

#include "sim/DenseWindow.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace schedc::sim {

template <class V> class IdMap {
public:
  // The value of `id` (nonzero), or null.
  const V *find(uint32_t id) const {
    if (const V *v = window_.find(id))
      return empty(*v) ? nullptr : v;
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
  // The value of `id` (nonzero), added as V{} if it had none; the caller makes it other than
  // V{} (a value left equal to V{} is no entry).
  V &findOrAdd(uint32_t id) {
    if (V *v = find(id))
      return *v;
    if (V *v = windowCell(id)) {
      ++inWindow_;
      return *v;
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
  static bool empty(const V &v) { return v == V{}; }
  // The window may span this many cells for each it holds, and kSlack more.
  static constexpr size_t kCellsPerUse = 4, kSlack = 16;

  // The window's cell for `id`, growing the window to cover it; null if that would make it
  // too sparse.
  V *windowCell(uint32_t id) {
    size_t before = window_.size();
    V *v = window_.cover(id, inWindow_, kCellsPerUse, kSlack);
    if (v && window_.size() != before) {
      takeIntoWindow();
      v = window_.find(id);
    }
    return v;
  }
  // Moves the hashed entries the window now covers into it (find looks in one place only).
  void takeIntoWindow() {
    if (hashedUsed_ == 0)
      return;
    std::vector<Cell> old = std::exchange(hashed_, {});
    hashedUsed_ = 0;
    for (Cell &c : old)
      if (c.id != 0) {
        if (V *inWindow = window_.find(c.id)) {
          *inWindow = std::move(c.value);
          ++inWindow_;
        } else {
          hashedCell(c.id) = std::move(c);
          ++hashedUsed_;
        }
      }
  }
  // An empty hashed cell for `id` (not there yet), the table doubled first once it would be
  // more than 7/8 full. A hashed map is a rank whose ids interleave with every other rank's
  // (16 384 ranks of stdlib hybrid, 134 slots each): at half full it was the largest of
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

  DenseWindow<V> window_; // an empty cell is V{}
  size_t inWindow_ = 0;
  std::vector<Cell> hashed_; // a power of two of them, or none
  size_t hashedUsed_ = 0;
  unsigned shift_ = 64;
};

} // namespace schedc::sim
