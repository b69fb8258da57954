// Storage implementation: per-class insertion-ordered vectors with tombstones, compacted
// when they outnumber the live entries.
#include "sim/Storage.h"

namespace schedc::sim {

void Storage::count(const ValuePtr &v, int delta) {
  if (!v)
    return;
  bytes_ += delta * model_.bytes(*v);
  if (v->kind != Kind::Activation && v->kind != Kind::ActGrad)
    return;
  activationMemory_ += delta * static_cast<int64_t>(v->memory().asDouble());
  if (v->kind != Kind::Activation || !v->batches)
    return;
  for (int64_t b : v->batches->elements()) {
    int64_t &n = batchCount_[b];
    if (n == 0 && delta > 0)
      ++inFlight_;
    n += delta;
    if (n == 0 && delta < 0)
      --inFlight_;
  }
}

void Storage::store(const StorageKey &key, ValuePtr v, SourceRange storedAt) {
  count(v, +1);
  auto cls = static_cast<uint8_t>(v->kind);
  auto it = places_.find(key);
  if (it != places_.end()) {
    Entry &e = classes_[it->second.cls][it->second.slot];
    count(e.value, -1);
    if (it->second.cls == cls) { // same dictionary: the name keeps its position
      e.memory = v->memory();
      e.value = std::move(v);
      e.storedAt = storedAt;
      return;
    }
    e.value.reset(); // a different class: leave the old place, append to the new class
    ++dead_[it->second.cls];
    places_.erase(it);
  }
  places_.emplace(key, Place{cls, static_cast<uint32_t>(classes_[cls].size())});
  Number memory = v->memory();
  classes_[cls].push_back(Entry{key, std::move(v), storedAt, memory});
}

const ValuePtr *Storage::find(const StorageKey &key) const {
  auto it = places_.find(key);
  return it == places_.end() ? nullptr : &classes_[it->second.cls][it->second.slot].value;
}

bool Storage::erase(const StorageKey &key) {
  auto it = places_.find(key);
  if (it == places_.end())
    return false;
  uint8_t cls = it->second.cls;
  count(classes_[cls][it->second.slot].value, -1);
  classes_[cls][it->second.slot].value.reset();
  places_.erase(it);
  if (++dead_[cls] > 16 && dead_[cls] * 2 > classes_[cls].size())
    compact(cls);
  return true;
}

void Storage::compact(int cls) {
  std::vector<Entry> live;
  live.reserve(classes_[cls].size() - dead_[cls]);
  for (Entry &e : classes_[cls])
    if (e.value) {
      places_[e.key] = Place{static_cast<uint8_t>(cls), static_cast<uint32_t>(live.size())};
      live.push_back(std::move(e));
    }
  classes_[cls] = std::move(live);
  dead_[cls] = 0;
}

Number Storage::memory() const {
  Number total = Number::integer(0);
  for (const auto &entries : classes_)
    for (const Entry &e : entries)
      if (e.value)
        total += e.memory;
  return total;
}

int64_t Storage::payloadBytes() const {
  int64_t total = 0;
  for (const auto &entries : classes_)
    for (const Entry &e : entries)
      if (e.value)
        total += e.value->payloadBytes;
  return total;
}

void Storage::forEach(const std::function<void(const Held &)> &fn) const {
  for (const auto &entries : classes_)
    for (const Entry &e : entries)
      if (e.value)
        fn(Held{e.key, e.value, e.storedAt});
}

} // namespace schedc::sim
