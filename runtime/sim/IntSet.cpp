// IntSet implementation.
#include "sim/IntSet.h"

#include <algorithm>

namespace schedc::sim {

IntSet::IntSet(std::vector<int64_t> elems) : elems_(std::move(elems)) {
  if (!std::is_sorted(elems_.begin(), elems_.end()))
    std::sort(elems_.begin(), elems_.end());
  elems_.erase(std::unique(elems_.begin(), elems_.end()), elems_.end());
}

IntSet IntSet::range(int64_t lo, int64_t hi) {
  IntSet s;
  if (hi > lo) {
    s.elems_.reserve(static_cast<size_t>(hi - lo));
    for (int64_t v = lo; v < hi; ++v)
      s.elems_.push_back(v);
  }
  return s;
}

bool IntSet::contains(int64_t v) const {
  return std::binary_search(elems_.begin(), elems_.end(), v);
}

bool IntSet::subsetOf(const IntSet &o) const {
  return std::includes(o.elems_.begin(), o.elems_.end(), elems_.begin(), elems_.end());
}

IntSet IntSet::unite(const IntSet &o) const {
  if (o.empty())
    return *this;
  if (empty())
    return o;
  IntSet r;
  r.elems_.reserve(elems_.size() + o.elems_.size());
  if (elems_.back() < o.elems_.front() || o.elems_.back() < elems_.front()) {
    // One wholly below the other (a gradient accumulated micro-batch by micro-batch): the
    // union is the two side by side.
    const IntSet &low = elems_.back() < o.elems_.front() ? *this : o;
    const IntSet &high = &low == this ? o : *this;
    r.elems_.insert(r.elems_.end(), low.elems_.begin(), low.elems_.end());
    r.elems_.insert(r.elems_.end(), high.elems_.begin(), high.elems_.end());
    return r;
  }
  std::set_union(elems_.begin(), elems_.end(), o.elems_.begin(), o.elems_.end(), std::back_inserter(r.elems_));
  return r;
}

IntSet IntSet::intersect(const IntSet &o) const {
  IntSet r;
  if (elems_.empty() || o.elems_.empty() || elems_.back() < o.elems_.front() || o.elems_.back() < elems_.front())
    return r;
  std::set_intersection(elems_.begin(), elems_.end(), o.elems_.begin(), o.elems_.end(), std::back_inserter(r.elems_));
  return r;
}

IntSet IntSet::minus(const IntSet &o) const {
  IntSet r;
  std::set_difference(elems_.begin(), elems_.end(), o.elems_.begin(), o.elems_.end(), std::back_inserter(r.elems_));
  return r;
}

bool IntSet::isPrefix(int64_t n) const {
  return static_cast<int64_t>(elems_.size()) == n && (n == 0 || (elems_.front() == 0 && elems_.back() == n - 1));
}

std::string IntSet::str() const {
  std::string s = "{";
  for (size_t i = 0; i < elems_.size();) {
    size_t j = i;
    while (j + 1 < elems_.size() && elems_[j + 1] == elems_[j] + 1)
      ++j;
    if (i)
      s += ", ";
    if (j - i >= 4) { // a run of 5 or more, where it is shorter: `0, 1, ..., 511`
      s += std::to_string(elems_[i]) + ", " + std::to_string(elems_[i + 1]) + ", ..., " + std::to_string(elems_[j]);
      i = j + 1;
    } else {
      s += std::to_string(elems_[i]);
      ++i;
    }
  }
  return s + "}";
}

} // namespace schedc::sim
