// Sites — the source ranges a run's events and storage name, each kept once and named by a
// 4-byte id. Every event and every held slot records where in the source it happened; a
// schedule has a few dozen such places, so an event and a storage entry keep an id here in
// place of a 24-byte SourceRange (20 of the 56 bytes an event lost, 20 of a storage
// entry's 40). Recent ids are remembered by where their range begins, so a
// range asked for again (each is, once per event on every rank) is found without hashing.
// Each thread of a run keeps its own (engine/World.h's Lane), its ids from `first` on: the
// top bits of an id say whose it is. An imported PyTorch file has a place a cell (its rows
// run as tables: ir::TableStmt), so a run may have as many places as events.
#pragma once

#include "diagnostics/InternalError.h"
#include "diagnostics/SourceManager.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace schedc::sim {

class Sites {
public:
  using Id = uint32_t;
  // Where there are several, an id's bits above these say which it is of (at most 16 M
  // ranges each; one alone has the whole 32 bits).
  static constexpr unsigned kLaneShift = 24;

  explicit Sites(Id first = 0, Id capacity = ~Id{0}) : first_(first), capacity_(capacity) {}

  Id intern(const SourceRange &r) {
    Id &cached = recent_[(r.begin.line * 31 + r.begin.col) % kRecent];
    if (cached < ranges_.size() && same(ranges_[cached], r)) [[likely]]
      return first_ + cached;
    cached = lookUp(r);
    return first_ + cached;
  }
  const SourceRange &range(Id id) const { return ranges_[id - first_]; }

private:
  // The id of `r`, given it now if it has none (off the path of a recent range). Open
  // addressing over the ids, at most half full, so that the many sites of a PyTorch file's
  // rows (a site a cell) cost no allocation each (docs/performance.md).
  [[gnu::noinline]] Id lookUp(const SourceRange &r) {
    if (2 * (ranges_.size() + 1) > slots_.size())
      grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(r) & mask;; i = (i + 1) & mask) {
      Id id = slots_[i];
      if (id == kNoId) {
        SCHEDC_ASSERT(ranges_.size() < capacity_, "more sites than a lane has ids for");
        slots_[i] = static_cast<Id>(ranges_.size());
        ranges_.push_back(r);
        return slots_[i];
      }
      if (same(ranges_[id], r))
        return id;
    }
  }
  void grow() {
    slots_.assign(std::max<size_t>(64, 2 * slots_.size()), kNoId);
    size_t mask = slots_.size() - 1;
    for (Id id = 0; id < ranges_.size(); ++id) {
      size_t i = hash(ranges_[id]) & mask;
      while (slots_[i] != kNoId)
        i = (i + 1) & mask;
      slots_[i] = id;
    }
  }
  // Six 32-bit fields and no padding: compared as bytes, without a branch per field.
  static_assert(sizeof(SourceRange) == 6 * sizeof(uint32_t));
  static bool same(const SourceRange &a, const SourceRange &b) { return std::memcmp(&a, &b, sizeof a) == 0; }
  // By where the range begins: lines and files spread apart, the columns of a line next to
  // each other, so that a row of a PyTorch file (a line, a range a cell, used in turn) probes
  // slots side by side, in cache.
  static size_t hash(const SourceRange &r) {
    return size_t{r.begin.file} * 0x9E3779B97F4A7C15ull + size_t{r.begin.line} * 0x9E3779B1ull + r.begin.col;
  }

  Id first_, capacity_;
  std::vector<Id> slots_; // a power of two of them: kNoId, or an id (into ranges_)
  std::vector<SourceRange> ranges_;
  static constexpr size_t kRecent = 1024;
  static constexpr Id kNoId = ~Id{0};
  std::array<Id, kRecent> recent_ = [] {
    std::array<Id, kRecent> a;
    a.fill(kNoId);
    return a;
  }();
};

} // namespace schedc::sim
