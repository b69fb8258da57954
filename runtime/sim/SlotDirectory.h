// SlotDirectory — the names of one rank's storage slots (`act[l, mb]`: array `act`, index
// {l, mb}) and a small integer id for each, without hashing: indices are looked up level by
// level in dense tables (one per array and index length at the first level, one per prefix
// below), as schedules index by layer, micro-batch, shard and rank. A table grows to cover a
// new index only while at least about one in 16 of its cells stays in use; an index that
// would make it sparser (act[1000000] beside act[0]) goes to a hash map instead. Ids are
// never reused: a freed slot keeps its id (and its place in the caller's tables). One
// directory names the slots of every rank of a run (Storage.h).
//
// Against the hash map of keys it replaces: a lookup is a few array reads with no hash and
// no key comparison, and a slot takes 4 bytes of table and 16 of record instead of a
// 112-byte node and its bucket (gpipe on 64 ranks x 256 micro-batches: 83 000 slots).
#pragma once

#include "sim/DenseWindow.h"

#include <array>
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace schedc::sim {

// A slot's index (`act[l, mb]`: {l, mb}), inline up to four dimensions: naming a slot
// allocates nothing for the shapes schedules use.
using SlotIndex = boost::container::small_vector<int64_t, 4>;
inline std::span<const int64_t> indexSpan(const SlotIndex &i) {
  return {i.data(), i.size()};
}

struct StorageKey {
  StorageKey(uint32_t a, std::span<const int64_t> i) : array(a), index(i.begin(), i.end()) {}
  StorageKey(uint32_t a, SlotIndex i) : array(a), index(std::move(i)) {}
  uint32_t array = 0;
  SlotIndex index;
  friend bool operator==(const StorageKey &a, const StorageKey &b) { return a.array == b.array && a.index == b.index; }
};

struct StorageKeyHash {
  size_t operator()(const StorageKey &k) const {
    size_t h = k.array * 0x9E3779B97F4A7C15ull;
    for (int64_t v : k.index)
      h = (h ^ static_cast<size_t>(v)) * 0x100000001B3ull;
    return h;
  }
};

class SlotDirectory {
public:
  static constexpr uint32_t kNone = 0; // ids count from 1

  // The id of `array[index]`, or kNone if it was never named. Inline: every read, store and
  // free looks a name up; only the hash map of the rest is out of line.
  uint32_t find(uint32_t array, std::span<const int64_t> index) const {
    size_t dims = index.size();
    if (dims >= 1 && dims <= kTableDims && array < firstLevels_.size()) {
      uint32_t id = firstLevels_[array][dims - 1];
      for (size_t d = 0; id != kNone && d < dims; ++d) {
        const uint32_t *cell = tables_[id].cells.find(index[d]);
        id = cell ? *cell : kNone;
      }
      if (id != kNone)
        return id;
    }
    return sparse_.empty() ? kNone : findSparse(array, index);
  }
  // The id of `array[index]`, given it now if it had none.
  uint32_t findOrAdd(uint32_t array, std::span<const int64_t> index);
  // The name of slot `id`.
  StorageKey key(uint32_t id) const;
  size_t size() const { return slots_.size() - 1; }

private:
  // Indices up to this long go through tables; longer ones to the hash map.
  static constexpr size_t kTableDims = 4;
  // One table: cells for the coordinates base .. base + cells.size() - 1 at one position of
  // the index, holding the next position's table (or, at the last position, a slot id).
  struct Table {
    DenseWindow<uint32_t> cells; // 0: nothing under this coordinate
    uint32_t used = 0;           // cells that are not 0
    uint32_t parent = 0;         // the table one position up (0: this is a first level)
    int64_t coord = 0;           // this table's coordinate in its parent
    uint32_t array = 0;
  };
  // A slot: the table holding it and its coordinate there (table 0: in the hash map, and
  // `coord` is its key's position in sparseKeys_).
  struct Slot {
    uint32_t table = 0;
    int64_t coord = 0;
  };

  uint32_t newTable(uint32_t array, uint32_t parent, int64_t coord);
  uint32_t newSlot(uint32_t table, int64_t coord);
  uint32_t addSparse(uint32_t array, std::span<const int64_t> index);
  uint32_t findSparse(uint32_t array, std::span<const int64_t> index) const;

  // firstLevels_[array][dims - 1]: the first-level table of each array and index length.
  std::vector<std::array<uint32_t, kTableDims>> firstLevels_;
  std::vector<Table> tables_{1}; // tables_[0] is unused: 0 means none
  std::vector<Slot> slots_{1};   // likewise
  // Indices too long, too sparse or of length 0 (`x[]`).
  std::unordered_map<StorageKey, uint32_t, StorageKeyHash> sparse_;
  std::vector<StorageKey> sparseKeys_; // their keys, in the order they were named
};

} // namespace schedc::sim
