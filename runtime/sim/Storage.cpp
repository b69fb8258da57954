// Storage implementation: per-class insertion-ordered vectors of slot ids, whose dead
// entries (freed, or moved to another class) are compacted away when they outnumber the
// live ones; the slots' places own the values.
#include "sim/Storage.h"

#include "diagnostics/InternalError.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

namespace schedc::sim {

void Storage::count(const Value &v, int delta) {
  if (v.tier != Tier::Device) [[unlikely]] { // bytes of its tier only: the rest is the device's
    offDeviceBytes_[static_cast<size_t>(v.tier) - 1] += delta * heldBytes(v);
    return;
  }
  countMemory(v.memory(), delta);
  double bytes = delta * heldBytes(v), buffer = delta * model_.gradientBufferBytes(v);
  bytes_ += bytes;
  shares_[static_cast<size_t>(model_.shareOf(v))] += bytes - buffer;
  shares_[static_cast<size_t>(ByteShare::Gradients)] += buffer;
  if (v.kind != Kind::Activation && v.kind != Kind::ActGrad)
    return;
  activationMemory_ += delta * static_cast<int64_t>(v.memory().asDouble());
  // Micro-batches in flight are the rank's own: tokens dispatched to its experts are a share
  // of the group's micro-batches, each also held whole by the member it came from.
  if (v.kind != Kind::Activation || !v.batches || atExperts(v.split))
    return;
  for (int64_t b : v.batches->elements()) {
    int64_t &n = batchCounts_[b];
    if (n == 0 && delta > 0)
      ++inFlight_;
    n += delta;
    if (n == 0 && delta < 0)
      --inFlight_;
  }
}

namespace {

// Whether `a` and `b` count the same in every total Storage keeps (memory, bytes,
// activation memory, micro-batches in flight): then replacing one by the other changes
// none of them (a weight by its update often does not).
bool countsAlike(const Value &a, const Value &b) {
  Number ma = a.memory(), mb = b.memory();
  return a.kind == b.kind && a.split == b.split && a.tier == b.tier && a.layer == b.layer && a.total == b.total &&
         a.shards == b.shards && a.batches == b.batches && ma.isInteger() == mb.isInteger() &&
         ma.payload() == mb.payload();
}

} // namespace

Storage::~Storage() {
  for (int cls = 0; cls < kKinds; ++cls)
    forEachLive(cls, [&](uint32_t id, const Place &) { places_.find(id)->release(); });
}

ValuePtr Storage::store(uint32_t array, std::span<const int64_t> index, ValuePtr v, Sites::Id storedAt) {
  auto cls = static_cast<uint8_t>(v->kind);
  uint32_t id = names_.findOrAdd(array, index);
  Place &place = places_.findOrAdd(id); // a new one holds nothing (kNever)
  ValuePtr replaced;
  if (!place.holds()) {
    count(*v, +1);
  } else {
    replaced = place.release();
    if (!countsAlike(*replaced, *v)) {
      count(*v, +1);
      count(*replaced, -1);
    }
    if (replaced->kind == v->kind) { // same dictionary: the name keeps its position
      place.at = storedAt;
      place.own(std::move(v));
      return replaced;
    }
    ++dead_[static_cast<size_t>(replaced->kind)]; // another class: its entry there is dead
  }
  // 2^29 entries of one class would be 40 GiB of values: memory runs out first.
  SCHEDC_ASSERT(classes_[cls].size() < (size_t{1} << kClassShift), "a storage class outgrew its entry numbers");
  place.entry = entryCode(cls, classes_[cls].size());
  place.at = storedAt;
  place.own(std::move(v));
  classes_[cls].push_back(id);
  return replaced;
}

const Storage::Place *Storage::placeOf(uint32_t array, std::span<const int64_t> index) const {
  uint32_t id = names_.find(array, index);
  return id == SlotDirectory::kNone ? nullptr : places_.find(id);
}

const Value *Storage::find(uint32_t array, std::span<const int64_t> index) const {
  const Place *place = placeOf(array, index);
  if (!place || !place->holds())
    return nullptr;
  return place->value();
}

std::optional<Sites::Id> Storage::freedAt(uint32_t array, std::span<const int64_t> index) const {
  const Place *place = placeOf(array, index);
  if (!place || place->entry != kFreed)
    return std::nullopt;
  return place->at;
}

ValuePtr Storage::erase(uint32_t array, std::span<const int64_t> index, Sites::Id at) {
  Place *place = placeOf(array, index);
  if (!place || !place->holds())
    return nullptr;
  ValuePtr erased = place->release();
  count(*erased, -1);
  place->entry = kFreed;
  place->at = at;
  auto cls = static_cast<size_t>(erased->kind);
  if (++dead_[cls] > 16 && dead_[cls] * 2 > classes_[cls].size())
    compact(static_cast<int>(cls));
  return erased;
}

// Drops the class's dead entries in place (keeping the vector's capacity: no allocation).
void Storage::compact(int cls) {
  std::vector<Entry> &entries = classes_[static_cast<size_t>(cls)];
  size_t live = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    Place *place = places_.find(entries[i]);
    if (isLive(*place, cls, i)) {
      place->entry = entryCode(static_cast<uint8_t>(cls), live);
      entries[live++] = entries[i];
    }
  }
  entries.resize(live);
  dead_[static_cast<size_t>(cls)] = 0;
}

namespace {

// A finite `v` >= 0 as m x 2^e with an integer m (read from the double's bits: no libm call
// on the path of every stored and freed value).
struct Dyadic {
  uint64_t m;
  int e;
};
Dyadic dyadic(double v) {
  auto bits = std::bit_cast<uint64_t>(v);
  auto biased = static_cast<int>(bits >> 52) & 0x7ff;
  uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (biased == 0) // subnormal (or zero)
    return {fraction, -1074};
  return {fraction | uint64_t{1} << 52, biased - 1075};
}

// How many binary digits after the point `d` needs: 0 for an integer.
int fractionBits(Dyadic d) {
  if (d.m == 0)
    return 0;
  return std::max(0, -(d.e + std::countr_zero(d.m)));
}

// d x 2^fractionBits, exactly: `d` (below 2^60) has at most that many fractional digits.
__int128 scaled(Dyadic d, int fractionBits) {
  if (d.m == 0)
    return 0;
  int shift = d.e + fractionBits;
  return shift >= 0 ? static_cast<__int128>(d.m) << shift : static_cast<__int128>(d.m >> -shift);
}

} // namespace

void Storage::countMemory(const Number &memory, int delta) {
  if (memory.isInteger()) {
    integerMemory_ += delta * static_cast<int64_t>(memory.asDouble());
    return;
  }
  reals_ += delta;
  double v = memory.asDouble();
  bool exactable = std::isfinite(v) && v >= 0;
  Dyadic d = exactable ? dyadic(v) : Dyadic{0, 0};
  int bits = exactable ? fractionBits(d) : kFractionBits + 1;
  if (bits > kFractionBits || v >= 0x1p60) {
    inexact_ += delta;
    return;
  }
  uint64_t bit = uint64_t{1} << bits;
  realBits_[bits] += delta;
  realBitsHeld_ = realBits_[bits] == 0 ? realBitsHeld_ & ~bit : realBitsHeld_ | bit;
  __int128 term = scaled(d, kFractionBits);
  realScaled_ += delta > 0 ? term : -term; // not delta x term: a 128-bit multiplication
}

Number Storage::memory() const {
  if (reals_ == 0)
    return Number::integer(integerMemory_);
  if (inexact_ == 0 && integerMemory_ >= 0) {
    int finest = realBitsHeld_ ? 63 - std::countl_zero(realBitsHeld_) : 0;
    __int128 total = realScaled_ + (static_cast<__int128>(integerMemory_) << kFractionBits);
    if (total < (static_cast<__int128>(1) << (53 - finest + kFractionBits))) { // every partial sum exact
      // Every term is a multiple of 2^-finest, so the total is m x 2^-finest with m < 2^53:
      // both conversions below are exact (no 128-bit float conversion, no libm call).
      auto m = static_cast<int64_t>(total >> (kFractionBits - finest));
      return Number::real(static_cast<double>(m) / static_cast<double>(uint64_t{1} << finest));
    }
  }
  Number total = Number::integer(0);
  forEach([&](const Held &h) {
    if (h.value->tier == Tier::Device)
      total += h.value->memory();
  });
  return total;
}

std::array<int64_t, kTiers> Storage::payloadBytes() const {
  std::array<int64_t, kTiers> total{};
  forEach([&](const Held &h) { total[static_cast<size_t>(h.value->tier)] += h.value->payloadBytes(); });
  return total;
}

void Storage::setLayerForm(int64_t layer, LayerForm form) {
  if (layer < 0 || layerForm(layer) == form)
    return;
  auto recount = [&](int sign) {
    forEachLive(static_cast<int>(Kind::Activation), [&](uint32_t, const Place &place) {
      if (const Value &v = *place.value(); v.layer == layer) {
        double bytes = sign * model_.bytes(v, layerForm(layer));
        if (v.tier != Tier::Device) {
          offDeviceBytes_[static_cast<size_t>(v.tier) - 1] += bytes;
          return;
        }
        bytes_ += bytes;
        shares_[static_cast<size_t>(model_.shareOf(v))] += bytes;
      }
    });
  };
  recount(-1);
  if (static_cast<size_t>(layer) >= layerForms_.size())
    layerForms_.resize(static_cast<size_t>(layer) + 1);
  layerForms_[static_cast<size_t>(layer)] = form;
  recount(+1);
}

void Storage::forEach(const std::function<void(const Held &)> &fn) const {
  for (int k = 0; k < kKinds; ++k)
    forEachOf(static_cast<Kind>(k), fn);
}

void Storage::forEachOf(Kind kind, const std::function<void(const Held &)> &fn) const {
  forEachLive(static_cast<int>(kind), [&](uint32_t id, const Place &place) {
    fn(Held{names_, id, place.value(), place.at});
  });
}

} // namespace schedc::sim
