// Value implementation: memory units and descriptions.
#include "sim/Value.h"

#include <vector>

namespace schedc::sim {

static_assert(sizeof(void *) != 8 || sizeof(Value) <= 112,
              "a value and its control block no longer fit in 128 bytes (see Value's field order)");

ValuePtr makeValue(Value v) {
  v.memory_ = v.computeMemory();
  return std::make_shared<const Value>(std::move(v));
}

Number Value::computeMemory() const {
  switch (kind) {
  case Kind::Activation:
  case Kind::ActGrad:
    if (split == Split::Sequence) // its shards of the sequence
      return Number::real(static_cast<double>(batches->size()) * 512 * 256 * static_cast<double>(shards->size()) /
                          static_cast<double>(total));
    return Number::integer(static_cast<int64_t>(batches->size()) * 512 * 256);
  default:
    // Left to right, as the original computes it: ((|shards| / total) * 512) * 512.
    return Number::real(static_cast<double>(shards->size()) / static_cast<double>(total) * 512 * 512);
  }
}

std::string Value::describe() const {
  std::string s =
      std::string(kind == Kind::OptState || kind == Kind::Activation || kind == Kind::ActGrad ? "an " : "a ") +
      kindName(kind) + " of layer " + std::to_string(layer);
  // "tensor-parallel part {1} of 4", "shards {1} of 4"
  std::string pieces = std::string(split == Split::Part ? "tensor-parallel part " : "shards ") + shards->str() +
                       " of " + std::to_string(total);
  switch (kind) {
  case Kind::Weight:
  case Kind::OptState: return s + " (" + pieces + ", step " + std::to_string(step) + ")";
  case Kind::WeightGrad: return s + " (batches " + batches->str() + ", " + pieces + ")";
  default:
    if (split == Split::PartialSum)
      return s + " (batches " + batches->str() + ", a partial sum of tensor-parallel parts " + shards->str() + " of " +
             std::to_string(total) + ")";
    if (split == Split::Sequence)
      return s + " (batches " + batches->str() + ", sequence shards " + shards->str() + " of " + std::to_string(total) +
             ")";
    return s + " (batches " + batches->str() + ")";
  }
}

std::shared_ptr<const IntSet> emptySet() {
  static const auto empty = std::make_shared<const IntSet>();
  return empty;
}

std::shared_ptr<const IntSet> singleSet(int64_t v) {
  constexpr int64_t kInterned = int64_t{1} << 16; // at most 1 MiB of pointers
  if (v < 0 || v >= kInterned)
    return std::make_shared<const IntSet>(IntSet::single(v));
  thread_local std::vector<std::shared_ptr<const IntSet>> interned;
  if (static_cast<size_t>(v) >= interned.size())
    interned.resize(static_cast<size_t>(v) + 1);
  std::shared_ptr<const IntSet> &s = interned[static_cast<size_t>(v)];
  if (!s)
    s = std::make_shared<const IntSet>(IntSet::single(v));
  return s;
}

std::shared_ptr<const IntSet> setOf(IntSet s) {
  if (s.empty())
    return emptySet();
  if (s.size() == 1)
    return singleSet(s.min());
  return std::make_shared<const IntSet>(std::move(s));
}

} // namespace schedc::sim
