// Value implementation: memory units, descriptions, and values' blocks from a free list.
#include "sim/Value.h"

#include "diagnostics/InternalError.h"
#include "memory/Sanitizer.h"

#include <algorithm>
#include <atomic>
#include <unistd.h>
#include <utility>

#include <vector>

namespace schedc::sim {

static_assert(sizeof(void *) != 8 || sizeof(Value) <= 80, "a value no longer fits 80 bytes (see Value's field order)");

namespace {

// A thread's freed values' blocks, kept for its next values: a check makes and drops two
// values an event, and a free list is cheaper than jemalloc's fast paths for the pair
// (docs/performance.md, "Figures behind design choices"). At most kKeptFreeValues (5 MiB) a
// thread; the rest go back to jemalloc, as all of them do when a thread other than the main
// one ends (the main thread's are the kernel's at exit, like its stacks: engine/Fiber.cpp).
// Off under AddressSanitizer, so that it sees every value's allocation.
struct FreeBlock {
  FreeBlock *next;
};
constexpr uint32_t kKeptFreeValues = uint32_t{1} << 16;
// Plain thread-local words on the path of every value (an object with a destructor is reached
// through a call); the list's owner below empties it when the thread ends.
thread_local FreeBlock *freeValues = nullptr;
thread_local uint32_t freeValueCount = 0;
struct FreeListOwner {
  // Values dropped after this (by other thread-locals) go to jemalloc: the list counts as full.
  ~FreeListOwner() {
    if (gettid() != getpid())
      while (FreeBlock *b = std::exchange(freeValues, freeValues ? freeValues->next : nullptr))
        ::operator delete(b, sizeof(Value));
    freeValueCount = kKeptFreeValues;
  }
};
thread_local FreeListOwner freeListOwner;

} // namespace

void *Value::operator new(size_t bytes) {
  SCHEDC_ASSERT(bytes == sizeof(Value), "a value of another size");
#ifndef SCHEDC_ASAN
  if (FreeBlock *b = freeValues) {
    freeValues = b->next;
    --freeValueCount;
    return b;
  }
#endif
  return ::operator new(bytes);
}

void Value::operator delete(void *block, size_t bytes) noexcept {
#ifndef SCHEDC_ASAN
  if (freeValueCount < kKeptFreeValues) [[likely]] {
    if (freeValueCount == 0)
      (void)&freeListOwner; // the list has an owner from its first block on
    auto *b = static_cast<FreeBlock *>(block);
    b->next = freeValues;
    freeValues = b;
    ++freeValueCount;
    return;
  }
#endif
  ::operator delete(block, bytes);
}

ValuePtr makeValue(Value v) {
  v.setMemory(v.computeMemory());
  return ValuePtr(new Value(std::move(v)));
}

Number Value::computeMemory() const {
  switch (kind) {
  case Kind::Activation:
  case Kind::ActGrad:
    if (split == Split::Sequence) // its shards of the sequence
      return Number::real(static_cast<double>(batches->size()) * 512 * 256 * static_cast<double>(shards->size()) /
                          static_cast<double>(total));
    if (atExperts(split)) // its share of the dispatch group's tokens
      return Number::real(static_cast<double>(batches->size()) * 512 * 256 / static_cast<double>(total));
    return Number::integer(static_cast<int64_t>(batches->size()) * 512 * 256);
  case Kind::Weight:
  case Kind::WeightGrad:
  case Kind::OptState:
    // Left to right, as the original computes it: ((|shards| / total) * 512) * 512. A side of a
    // mixture-of-experts layer is half of it (the puzzle's convention, docs/costs.md).
    if (split == Split::Dense || split == Split::Experts)
      return Number::real(static_cast<double>(shards->size()) / static_cast<double>(total) * 512 * 256);
    return Number::real(static_cast<double>(shards->size()) / static_cast<double>(total) * 512 * 512);
  }
  SCHEDC_UNREACHABLE("a value kind without its memory");
}

std::string Value::slices() const {
  std::string of = shards->str() + " of " + std::to_string(total);
  switch (split) {
  case Split::Part: return "tensor-parallel part " + of;
  case Split::Experts: return "the routed experts' slice " + of;
  case Split::Dense: return total == 1 ? "the dense part (no routed experts)" : "shards " + of + " of the dense part";
  case Split::None:
  case Split::PartialSum:
  case Split::Sequence:
  case Split::Routed:
  case Split::Dispatched:
  case Split::ExpertOutput: break;
  }
  return "shards " + of;
}

namespace {

// describe() without the tier.
std::string describeOnDevice(const Value &v) {
  std::string s =
      std::string(v.kind == Kind::OptState || v.kind == Kind::Activation || v.kind == Kind::ActGrad ? "an " : "a ") +
      kindName(v.kind) + " of layer " + std::to_string(v.layer);
  std::string pieces = v.slices();
  switch (v.kind) {
  case Kind::Weight:
  case Kind::OptState: return s + " (" + pieces + ", step " + std::to_string(v.step) + ")";
  case Kind::WeightGrad: return s + " (batches " + v.batches->str() + ", " + pieces + ")";
  case Kind::Activation:
  case Kind::ActGrad:
    if (v.split == Split::PartialSum)
      return s + " (batches " + v.batches->str() + ", a partial sum of tensor-parallel parts " + v.shards->str() +
             " of " + std::to_string(v.total) + ")";
    if (v.split == Split::Sequence)
      return s + " (batches " + v.batches->str() + ", sequence shards " + v.shards->str() + " of " +
             std::to_string(v.total) + ")";
    if (v.split == Split::Routed)
      return s + " (batches " + v.batches->str() + ", at the router)";
    if (atExperts(v.split))
      return s + " (batches " + v.batches->str() +
             (v.split == Split::Dispatched ? ", at the experts" : ", the experts' output") + " of slice " +
             std::to_string(v.step) + " of " + std::to_string(v.total) + "; batches " + v.shards->str() +
             " come back here)";
    return s + " (batches " + v.batches->str() + ")";
  }
  SCHEDC_UNREACHABLE("a value kind without its description");
}

} // namespace

std::string Value::describe() const {
  std::string s = describeOnDevice(*this);
  return tier == Tier::Device ? s : s + " " + tierPlace(tier);
}

std::pair<int64_t, int64_t> singleSlice(const IntSet &shards, int64_t total) {
  int64_t count = static_cast<int64_t>(shards.size());
  if (count == 0 || total % count != 0 || shards.min() % count != 0 || shards.max() - shards.min() + 1 != count)
    return {-1, 0};
  return {shards.min() / count, total / count};
}

bool slicesCover(const IntSet &a, int64_t aTotal, const IntSet &b, int64_t bTotal) {
  if (aTotal == bTotal)
    return b.subsetOf(a);
  // In units of 1 / (aTotal bTotal): a's slice i is [i bTotal, (i + 1) bTotal), b's slice j
  // [j aTotal, (j + 1) aTotal). a's slices are merged into runs; each of b's must lie in one.
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t i : a.elements()) {
    if (!runs.empty() && runs.back().second == i * bTotal)
      runs.back().second = (i + 1) * bTotal;
    else
      runs.push_back({i * bTotal, (i + 1) * bTotal});
  }
  for (int64_t j : b.elements()) {
    int64_t lo = j * aTotal, hi = (j + 1) * aTotal;
    auto run = std::upper_bound(runs.begin(), runs.end(), lo,
                                [](int64_t x, const std::pair<int64_t, int64_t> &r) { return x < r.first; });
    if (run == runs.begin() || std::prev(run)->second < hi)
      return false;
  }
  return true;
}

namespace {

const IntSet *interned(IntSet s) {
  auto *p = new IntSet(std::move(s));
  p->countAs(IntSet::Counting::Never);
  return p;
}

} // namespace

SetPtr emptySet() {
  static const IntSet *const empty = interned(IntSet());
  return SetPtr(empty);
}

// Process-wide, for every thread of a parallel run (engine/World.h): a set is made at its first
// use and kept; two threads that make one at once keep the first.
SetPtr singleSet(int64_t v) {
  constexpr int64_t kInterned = int64_t{1} << 16; // 512 KiB of pointers, paged in as used
  if (v < 0 || v >= kInterned)
    return makeSet(IntSet::single(v));
  static std::atomic<const IntSet *> sets[kInterned];
  std::atomic<const IntSet *> &slot = sets[v];
  const IntSet *s = slot.load(std::memory_order_acquire);
  if (!s) [[unlikely]] {
    const IntSet *made = interned(IntSet::single(v));
    if (slot.compare_exchange_strong(s, made, std::memory_order_acq_rel))
      s = made;
    else
      delete made;
  }
  return SetPtr(s);
}

SetPtr setOf(IntSet s) {
  if (s.empty())
    return emptySet();
  if (s.size() == 1)
    return singleSet(s.min());
  return makeSet(std::move(s));
}

} // namespace schedc::sim
