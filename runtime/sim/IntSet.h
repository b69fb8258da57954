// IntSet — a set of integers (micro-batches, shards, ranks) as a sorted vector: small,
// cache-friendly, cheap to compare, and shared between values through SetPtr (below) where the
// same set is used many times (collective results). Printed like Python sets, with long
// runs shortened: `{0, 1, 2}`, `{0, 1, ..., 511, 600}`.
#pragma once

#include <atomic>
#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace schedc::sim {

class IntSet {
public:
  IntSet() = default;
  // A copy is a new set: counted by no one yet, by one thread (its count is not copied).
  IntSet(const IntSet &other) : elems_(other.elems_) {}
  IntSet(IntSet &&other) noexcept : elems_(std::move(other.elems_)) {}
  IntSet &operator=(const IntSet &other) {
    elems_ = other.elems_;
    return *this;
  }
  IntSet &operator=(IntSet &&other) noexcept {
    elems_ = std::move(other.elems_);
    return *this;
  }
  // From any elements (sorted and deduplicated here).
  explicit IntSet(std::vector<int64_t> elems);
  static IntSet single(int64_t v) { return IntSet(std::vector<int64_t>{v}); }
  // {lo, ..., hi-1}.
  static IntSet range(int64_t lo, int64_t hi);

  size_t size() const { return elems_.size(); }
  bool empty() const { return elems_.empty(); }
  bool contains(int64_t v) const;
  bool subsetOf(const IntSet &other) const;
  const std::vector<int64_t> &elements() const { return elems_; }
  int64_t min() const { return elems_.front(); }
  int64_t max() const { return elems_.back(); }

  IntSet unite(const IntSet &other) const;
  IntSet intersect(const IntSet &other) const;
  IntSet minus(const IntSet &other) const;
  // True when the set is exactly {0, ..., n-1}.
  bool isPrefix(int64_t n) const;

  friend bool operator==(const IntSet &a, const IntSet &b) { return a.elems_ == b.elems_; }
  friend bool operator!=(const IntSet &a, const IntSet &b) { return !(a == b); }

  std::string str() const;

  // How a set is counted: by the one thread that holds it (every set made by a rank), by
  // several at once (a set a parallel run hands from one thread to others: a collective's
  // result, the groups every rank names; engine/World.h's Lane), or not at all (the sets
  // interned for the whole process: emptySet, singleSet, whose counts are written by no one,
  // so their cache lines stay clean and any thread may drop them). Set once, before the set
  // is shared.
  enum class Counting : uint8_t { OneThread, Threads, Never };
  void countAs(Counting c) const { counting_ = c; }
  Counting counting() const { return counting_; }
  // How many SetPtrs hold it (counted ones; for tests).
  uint32_t holders() const { return refs_; }

private:
  std::vector<int64_t> elems_;
  mutable uint32_t refs_ = 0;
  mutable Counting counting_ = Counting::OneThread;
  friend void intrusive_ptr_add_ref(const IntSet *s) {
    if (s->counting_ == Counting::OneThread) [[likely]]
      ++s->refs_;
    else if (s->counting_ == Counting::Threads)
      std::atomic_ref<uint32_t>(s->refs_).fetch_add(1, std::memory_order_relaxed);
  }
  friend void intrusive_ptr_release(const IntSet *s) {
    if (s->counting_ == Counting::OneThread) [[likely]] {
      if (--s->refs_ == 0)
        delete s;
    } else if (s->counting_ == Counting::Threads &&
               std::atomic_ref<uint32_t>(s->refs_).fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete s;
    }
  }
};

// A set shared by the values and groups that hold it, counted in place (IntSet::Counting).
using SetPtr = boost::intrusive_ptr<const IntSet>;
template <class... Args> SetPtr makeSet(Args &&...args) {
  return SetPtr(new IntSet(std::forward<Args>(args)...));
}

} // namespace schedc::sim
