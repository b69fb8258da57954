// Storage — one rank's named, indexed storage (`act[l, mb]`) with the exact memory
// accounting of the `puzzle` model: values are kept per storage class (weights, optimizer
// states, activations, activation gradients, weight gradients) in insertion order, like the
// Python dictionaries of the original (assigning to a held name keeps its position; freeing
// and assigning again moves it to the end), and memory is summed in that order starting
// from integer 0, so float rounding matches digit for digit.
#pragma once

#include "sim/Bytes.h"
#include "sim/DenseWindow.h"
#include "sim/IdMap.h"
#include "sim/Sites.h"
#include "sim/SlotDirectory.h"
#include "sim/Value.h"

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace schedc::sim {

class Storage {
public:
  // Slots are named in `names`, one directory for every rank of a lane (a thread's share of
  // a run: Lane::names): one copy of its tables stays in cache where 1024 ranks' own copies
  // did not (every fsdp rank names the same slots). `model` is what `bytes()` predicts with. Both must outlive it.
  Storage(const ByteModel &model, SlotDirectory &names) : names_(names), model_(model) {}
  ~Storage();
  Storage(const Storage &) = delete; // its places own their values
  Storage &operator=(const Storage &) = delete;
  // Stores `v` in `array[index]` (replacing what is there, keeping its position), at source
  // site `storedAt` (World::site); returns the value it replaced, or null.
  ValuePtr store(uint32_t array, std::span<const int64_t> index, ValuePtr v, Sites::Id storedAt);
  // The value in `array[index]`, or null.
  const Value *find(uint32_t array, std::span<const int64_t> index) const;
  // Empties `array[index]`, freed at site `at`; returns the value it held, or null if nothing
  // was held there.
  ValuePtr erase(uint32_t array, std::span<const int64_t> index, Sites::Id at);
  // Where `array[index]` was last freed, if it was and nothing was stored there since (for
  // messages).
  std::optional<Sites::Id> freedAt(uint32_t array, std::span<const int64_t> index) const;
  // (Memory, bytes, shares, micro-batches in flight and activation memory are the device's:
  // values in host memory or on NVMe count in tierBytes only.)
  // The rank's memory now, as the original sums it: in storage-class and insertion order,
  // from integer 0, in Python int/float arithmetic. Constant time whenever that sum is exact
  // (every held memory a multiple of 2^-k and the total below 2^(53-k): then no addition
  // rounds, and the order cannot matter); otherwise summed in order, so the float rounding
  // stays the original's (fsdp on 6 ranks: 2097151.9999999998).
  Number memory() const;
  // The bytes the held values take under the byte model (a prediction for a real run), and
  // by share (parameters, gradients, ...: they sum to bytes()).
  double bytes() const { return bytes_; }
  // The bytes held in `tier` (the device's: bytes()).
  double tierBytes(Tier tier) const {
    return tier == Tier::Device ? bytes_ : offDeviceBytes_[static_cast<size_t>(tier) - 1];
  }
  const ByteShares &shares() const { return shares_; }
  // The bytes `v` takes when held here (an activation of a layer this rank computes a
  // tensor-parallel part of: the part's).
  double heldBytes(const Value &v) const {
    if (v.kind != Kind::Activation)
      return model_.bytes(v);
    // The last layer's output (its logits) is split as the last layer is.
    bool logits = model_.transformer && v.layer >= model_.transformer->layers;
    return model_.bytes(v, layerForm(logits ? model_.transformer->layers - 1 : v.layer));
  }
  // This rank computes layer `layer` in `form` (set at its load): as one of `parts`
  // tensor-parallel parts, or with its routed experts apart; the bytes of the activations it
  // keeps for that layer are counted so (ByteModel::bytes), those already held again.
  void setLayerForm(int64_t layer, LayerForm form);
  // The bytes of real data (payloads) held now in each tier (what a real backend measures).
  std::array<int64_t, kTiers> payloadBytes() const;
  // How many distinct micro-batches the activations held now belong to (in flight).
  int64_t microBatchesInFlight() const { return inFlight_; }
  // The memory held now in activations and activation gradients (an integer in the model).
  int64_t activationMemory() const { return activationMemory_; }

  struct Held {
    const SlotDirectory &names;
    uint32_t slot;
    const Value *value;
    Sites::Id storedAt;
    StorageKey key() const { return names.key(slot); } // its name (built on demand)
  };
  // Every held value, in storage-class and insertion order.
  void forEach(const std::function<void(const Held &)> &fn) const;
  // Every held value of kind `kind`, in insertion order.
  void forEachOf(Kind kind, const std::function<void(const Held &)> &fn) const;

private:
  // A slot's value, where it was stored, and its entry in its class's order, by slot id
  // (SlotDirectory); a freed slot keeps its place, with where it was freed (one lookup
  // serves the store, read or free and the message about a freed slot). A read, a store
  // and a free touch the place and the value, two lines of a rank that has not run for a
  // while, and not the entry: the place owns the value (one count of it; 16 bytes, IdMap
  // keeps no id beside it; an entry is a 4-byte id).
  static constexpr uint32_t kFreed = ~0u, kNever = ~0u - 1;
  static constexpr int kClassShift = 29; // a place's entry: its class, then its index
  static_assert(kKinds < (1 << (32 - kClassShift)) - 1, "the classes fit below the sentinels (kNever, kFreed)");
  struct Place {
    uint32_t entry = kNever;     // class << kClassShift | index in classes_[class]; kFreed: freed
    Sites::Id at = 0;            // held: where it was stored; freed: where freed
    const Value *held = nullptr; // one count of it owned here
    bool holds() const { return entry < kNever; }
    const Value *value() const { return held; }
    void own(ValuePtr v) { held = v.detach(); }
    ValuePtr release() { return ValuePtr(std::exchange(held, nullptr), false); }
    bool operator==(const Place &) const = default; // Place{}: no place (IdMap)
  };
  static uint32_t entryCode(uint8_t cls, size_t index) {
    return static_cast<uint32_t>(cls) << kClassShift | static_cast<uint32_t>(index);
  }
  // A class's order of slots (the order the original's dictionaries keep): slot ids. An
  // entry is live while its slot's place names it; the others wait for compaction.
  using Entry = uint32_t;
  static bool isLive(const Place &place, int cls, size_t index) {
    return place.entry == entryCode(static_cast<uint8_t>(cls), index);
  }
  // Calls fn(id, place) for the live entries of class `cls`, in order.
  template <class Fn> void forEachLive(int cls, Fn fn) const {
    const std::vector<Entry> &entries = classes_[static_cast<size_t>(cls)];
    for (size_t i = 0; i < entries.size(); ++i)
      if (const Place &place = *places_.find(entries[i]); isLive(place, cls, i))
        fn(entries[i], place);
  }
  // The place of `array[index]`, or null if it was never named.
  const Place *placeOf(uint32_t array, std::span<const int64_t> index) const;
  Place *placeOf(uint32_t array, std::span<const int64_t> index) {
    return const_cast<Place *>(std::as_const(*this).placeOf(array, index));
  }
  void compact(int cls);
  // Counts `v` in (delta +1) or out (-1) of the memory held, the micro-batches in flight,
  // the activation memory and the bytes.
  void count(const Value &v, int delta);
  // Adds (delta +1) or removes (-1) one entry's memory from the running totals.
  void countMemory(const Number &memory, int delta);

  // Members in the order a read, a store or a free touches them (a rank's storage is cold
  // each time it resumes, so what they touch together shares cache lines): the names and
  // places, then the totals, then the classes' orders; the floats' counts by fractional
  // bits last (244 bytes, of which a schedule touches a line or two).
  SlotDirectory &names_;
  IdMap<Place> places_; // by slot id, of the slots this rank has named
  const ByteModel &model_;
  double bytes_ = 0;                                // sums of exact integers below 2^53: exact in any order
  std::array<double, kTiers - 1> offDeviceBytes_{}; // held in host memory, on NVMe
  ByteShares shares_{};
  // Running totals of the held memories: integers exactly; floats as exact multiples of
  // 2^-kFractionBits, with how many have each number of fractional bits (the largest bounds
  // the total below which every partial sum is exact).
  static constexpr int kFractionBits = 60;
  int64_t integerMemory_ = 0;
  size_t reals_ = 0;          // float memories held
  size_t inexact_ = 0;        // floats held that the scaled sum cannot hold exactly (negative, too fine)
  __int128 realScaled_ = 0;   // sum of float memories x 2^kFractionBits
  uint64_t realBitsHeld_ = 0; // bit k set: some float memory held has k fractional bits
  static_assert(kFractionBits < 64, "realBitsHeld_ has a bit for each count of fractional bits");
  int64_t inFlight_ = 0;
  int64_t activationMemory_ = 0;
  // Micro-batch -> activations held of it (a rank's micro-batches are few and close
  // together; a poisoned value's may be far).
  NearMap<int64_t> batchCounts_;
  std::array<std::vector<Entry>, kKinds> classes_;
  std::array<size_t, kKinds> dead_{};
  std::array<uint32_t, kFractionBits + 1> realBits_{}; // float memories by fractional bits
  std::vector<LayerForm> layerForms_;                  // per layer; missing: whole
  LayerForm layerForm(int64_t layer) const {
    return layer >= 0 && static_cast<size_t>(layer) < layerForms_.size() ? layerForms_[static_cast<size_t>(layer)]
                                                                         : LayerForm{};
  }
};

} // namespace schedc::sim
