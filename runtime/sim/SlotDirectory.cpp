// SlotDirectory implementation: dense tables level by level, a hash map for the rest.
#include "sim/SlotDirectory.h"

#include <algorithm>

namespace schedc::sim {

namespace {

// A table may span kCellsPerUse cells for each in use, and kSlack more. The directory is
// shared by every rank of a run, and ranks name the coordinates of one table in turns: the
// first micro-batch of each of 1024 data-parallel pipelines (0, 16, 32, ... in stdlib
// hybrid) leaves the table 1 in 16 full until the pipelines' later micro-batches fill it.
// At most 64 bytes of cells a slot, against some 170 in the hash map (a 96-byte node, a
// 64-byte copy of the key, a bucket).
constexpr uint64_t kCellsPerUse = 16;
constexpr uint64_t kSlack = 16;

} // namespace

uint32_t SlotDirectory::findSparse(uint32_t array, std::span<const int64_t> index) const {
  auto it = sparse_.find(StorageKey(array, index));
  return it == sparse_.end() ? kNone : it->second;
}

uint32_t SlotDirectory::findOrAdd(uint32_t array, std::span<const int64_t> index) {
  if (uint32_t id = find(array, index); id != kNone)
    return id;
  size_t dims = index.size();
  if (dims < 1 || dims > kTableDims)
    return addSparse(array, index);
  if (array >= firstLevels_.size())
    firstLevels_.resize(array + 1, std::array<uint32_t, kTableDims>{});
  uint32_t table = firstLevels_[array][dims - 1];
  if (table == kNone) {
    table = newTable(array, kNone, 0);
    firstLevels_[array][dims - 1] = table;
  }
  for (size_t d = 0; d < dims; ++d) {
    Table &t = tables_[table];
    uint32_t *cell = t.cells.cover(index[d], t.used, kCellsPerUse, kSlack);
    if (!cell)
      return addSparse(array, index);
    if (*cell != kNone) { // a table of the next position (a slot here would have been found)
      table = *cell;
      continue;
    }
    bool last = d + 1 == dims;
    uint32_t child = last ? newSlot(table, index[d]) : newTable(array, table, index[d]);
    Table &grown = tables_[table]; // newTable may have moved the tables
    *grown.cells.find(index[d]) = child;
    ++grown.used;
    table = child;
  }
  return table;
}

uint32_t SlotDirectory::newTable(uint32_t array, uint32_t parent, int64_t coord) {
  Table t;
  t.array = array;
  t.parent = parent;
  t.coord = coord;
  tables_.push_back(std::move(t));
  return static_cast<uint32_t>(tables_.size() - 1);
}

uint32_t SlotDirectory::newSlot(uint32_t table, int64_t coord) {
  slots_.push_back(Slot{table, coord});
  return static_cast<uint32_t>(slots_.size() - 1);
}

uint32_t SlotDirectory::addSparse(uint32_t array, std::span<const int64_t> index) {
  uint32_t id = newSlot(kNone, static_cast<int64_t>(sparseKeys_.size()));
  sparseKeys_.emplace_back(array, index);
  sparse_.emplace(sparseKeys_.back(), id);
  return id;
}

StorageKey SlotDirectory::key(uint32_t id) const {
  const Slot &s = slots_[id];
  if (s.table == kNone)
    return sparseKeys_[static_cast<size_t>(s.coord)];
  SlotIndex coords{s.coord}; // last position first
  uint32_t t = s.table;
  for (; tables_[t].parent != kNone; t = tables_[t].parent)
    coords.push_back(tables_[t].coord);
  std::reverse(coords.begin(), coords.end());
  return StorageKey(tables_[t].array, indexSpan(coords)); // copied: gcc 12 misreads a small_vector's move
}

} // namespace schedc::sim
