// Sites — the source ranges a run's events and storage name, each kept once and named by a
// 4-byte id. Every event and every held slot records where in the source it happened; a
// schedule has a few dozen such places, so an event and a storage entry keep an id here in
// place of a 24-byte SourceRange (20 of the 56 bytes an event lost, 20 of a storage
// entry's 40). Recent ids are remembered by where their range begins, so a
// range asked for again (each is, once per event on every rank) is found without hashing.
// Each thread of a run keeps its own (sim/World.h's Lane), its ids from `first` on: the
// top bits of an id say whose it is.
#pragma once

#include "diagnostics/InternalError.h"
#include "diagnostics/SourceManager.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <unordered_map>
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
  // The id of `r`, given it now if it has none (off the path of a recent range).
  [[gnu::noinline]] Id lookUp(const SourceRange &r) {
    auto [it, fresh] = ids_.try_emplace(r, static_cast<Id>(ranges_.size()));
    if (fresh) {
      SCHEDC_ASSERT(ranges_.size() < capacity_, "more sites than a lane has ids for");
      ranges_.push_back(r);
    }
    return it->second;
  }
  // Six 32-bit fields and no padding: compared as bytes, without a branch per field.
  static_assert(sizeof(SourceRange) == 6 * sizeof(uint32_t));
  static bool same(const SourceRange &a, const SourceRange &b) { return std::memcmp(&a, &b, sizeof a) == 0; }
  struct Hash {
    size_t operator()(const SourceRange &r) const {
      size_t h = 0;
      for (uint32_t v : {r.begin.file, r.begin.line, r.begin.col, r.end.file, r.end.line, r.end.col})
        h = (h ^ v) * 0x100000001B3ull;
      return h;
    }
  };
  struct Equal {
    bool operator()(const SourceRange &a, const SourceRange &b) const { return same(a, b); }
  };

  Id first_, capacity_;
  std::unordered_map<SourceRange, Id, Hash, Equal> ids_;
  std::vector<SourceRange> ranges_;
  static constexpr size_t kRecent = 64;
  static constexpr Id kNoId = ~Id{0};
  std::array<Id, kRecent> recent_ = [] {
    std::array<Id, kRecent> a;
    a.fill(kNoId);
    return a;
  }();
};

} // namespace schedc::sim
