// IntSet — a set of integers (micro-batches, shards, ranks) as a sorted vector: small,
// cache-friendly, cheap to compare, and shared between values through SetPtr (below) where the
// same set is used many times (collective results). Printed like Python sets, with long
// runs shortened: `{0, 1, 2}`, `{0, 1, ..., 511, 600}`.
#pragma once

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace schedc::sim {

class IntSet : public boost::intrusive_ref_counter<IntSet, boost::thread_unsafe_counter> {
public:
  IntSet() = default;
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

private:
  std::vector<int64_t> elems_;
};

// A set shared by the values and groups that hold it, counted in place (not atomically: sets,
// like values, live on the simulator's thread).
using SetPtr = boost::intrusive_ptr<const IntSet>;
template <class... Args> SetPtr makeSet(Args &&...args) {
  return SetPtr(new IntSet(std::forward<Args>(args)...));
}

} // namespace schedc::sim
