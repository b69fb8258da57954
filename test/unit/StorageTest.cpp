// Unit tests of sim/Storage.h's memory total: kept incrementally (integers, and floats as
// exact multiples of 2^-60 read from the doubles' bits), it must equal the sum the original
// makes — in storage-class and insertion order from integer 0, with Python's float rounding —
// digit for digit, as values of every class are stored, replaced and freed (and store and
// erase hand back the value they replaced or freed). Memories mix integers, sharded weights
// ((k/n) x 512 x 512), fractions too fine for the running total, tiny and subnormal numbers,
// zero and values near 2^60.
#include "sim/Storage.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>

namespace schedc::sim {
namespace {

Number orderedSum(const Storage &s) {
  Number total = Number::integer(0);
  s.forEach([&](const Storage::Held &h) { total += h.value->memory(); });
  return total;
}

ValuePtr valueOf(Kind kind, Number memory) {
  Value v;
  v.kind = kind;
  v.shards = singleSet(0);
  v.batches = singleSet(0);
  v.setMemory(memory);
  return ValuePtr(new Value(std::move(v)));
}

// A memory; `exactOnly`: only those the running total holds exactly (so memory() answers
// from it, not by summing), else any.
Number memoryOf(std::mt19937_64 &rng, bool exactOnly) {
  static const int kExact[] = {0, 1, 5, 7};
  switch (exactOnly ? kExact[rng() % 4] : static_cast<int>(rng() % 8)) {
  case 0: return Number::integer(static_cast<int64_t>(rng() % 1'000'000));
  case 1: return Number::real((static_cast<double>(rng() % 7 + 1) / static_cast<double>(rng() % 12 + 1)) * 512 * 512);
  case 2: return Number::real(std::ldexp(static_cast<double>(rng() % 1000), -static_cast<int>(rng() % 70)));
  case 3: return Number::real(std::ldexp(1.0, -1060)); // subnormal-adjacent and tiny
  case 4: return Number::real(5e-324);                 // the smallest subnormal
  case 5: return Number::real(0.0);
  case 6: return Number::real(std::ldexp(static_cast<double>(rng() % 4 + 1), 58)); // near 2^60
  default: return Number::real(static_cast<double>(rng() % 512) * 0.25);
  }
}

void checkAgainstOrderedSum(bool exactOnly) {
  ByteModel bytes;
  SlotDirectory names;
  Storage s(bytes, names);
  std::mt19937_64 rng(exactOnly ? 16 : 17);
  const Kind kinds[] = {Kind::Weight, Kind::OptState, Kind::Activation, Kind::ActGrad, Kind::WeightGrad};
  std::map<std::pair<uint32_t, int64_t>, ValuePtr> held; // what each slot holds (null: nothing)
  for (int step = 0; step < 4000; ++step) {
    std::vector<int64_t> index{static_cast<int64_t>(rng() % 40)};
    auto array = static_cast<uint32_t>(rng() % 3);
    ValuePtr &slot = held[{array, index[0]}];
    if (rng() % 3 == 0) {
      ASSERT_EQ(s.erase(array, index, 0), slot) << "step " << step << ": erase hands back what it held";
      slot = nullptr;
    } else {
      ValuePtr v = valueOf(kinds[rng() % 5], memoryOf(rng, exactOnly));
      ASSERT_EQ(s.store(array, index, v, 0), slot) << "step " << step << ": store hands back what it replaced";
      slot = v;
    }
    Number expected = orderedSum(s), got = s.memory();
    ASSERT_EQ(got.isInteger(), expected.isInteger()) << "step " << step;
    ASSERT_EQ(std::bit_cast<uint64_t>(got.asDouble()), std::bit_cast<uint64_t>(expected.asDouble()))
        << "step " << step << ": " << got.asDouble() << " against " << expected.asDouble();
  }
}

// A value of one of a few shapes (kind, layer, micro-batch or shard), made anew each time, so
// that a slot is often given a value that counts exactly like the one it holds (a weight
// replaced by its update) and as often one that does not.
ValuePtr shapedValue(std::mt19937_64 &rng) {
  const Kind kinds[] = {Kind::Weight, Kind::Activation, Kind::ActGrad, Kind::WeightGrad};
  Value v;
  v.kind = kinds[rng() % 4];
  v.layer = static_cast<int64_t>(rng() % 2);
  bool activation = v.kind == Kind::Activation || v.kind == Kind::ActGrad;
  v.batches = activation ? singleSet(static_cast<int64_t>(rng() % 3)) : emptySet();
  v.total = activation ? 1 : 2;
  v.shards = activation ? emptySet() : singleSet(static_cast<int64_t>(rng() % 2));
  return makeValue(std::move(v));
}

// Every total a storage keeps depends only on the values it holds: after each store or
// erase, they equal those of a fresh storage given just the values held now.
TEST(StorageMemory, TotalsDependOnlyOnWhatIsHeld) {
  ByteModel bytes;
  SlotDirectory names;
  Storage s(bytes, names);
  std::mt19937_64 rng(18);
  std::map<int64_t, ValuePtr> held;
  for (int step = 0; step < 2000; ++step) {
    std::vector<int64_t> index{static_cast<int64_t>(rng() % 6)};
    if (rng() % 4 == 0) {
      s.erase(0, index, 0);
      held.erase(index[0]);
    } else {
      ValuePtr v = shapedValue(rng);
      s.store(0, index, v, 0);
      held[index[0]] = v;
    }
    SlotDirectory freshNames;
    Storage fresh(bytes, freshNames);
    for (const auto &[slot, v] : held)
      fresh.store(0, std::vector<int64_t>{slot}, v, 0);
    ASSERT_EQ(s.memory().asDouble(), fresh.memory().asDouble()) << "step " << step;
    ASSERT_EQ(s.memory().isInteger(), fresh.memory().isInteger()) << "step " << step;
    ASSERT_EQ(s.bytes(), fresh.bytes()) << "step " << step;
    ASSERT_EQ(s.activationMemory(), fresh.activationMemory()) << "step " << step;
    ASSERT_EQ(s.microBatchesInFlight(), fresh.microBatchesInFlight()) << "step " << step;
  }
}

TEST(StorageMemory, RunningTotalEqualsTheInOrderSum) {
  checkAgainstOrderedSum(true);
}

TEST(StorageMemory, AnyMemoriesEqualTheInOrderSumDigitForDigit) {
  checkAgainstOrderedSum(false);
}

} // namespace
} // namespace schedc::sim
