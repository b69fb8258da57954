// EndTally — what the end-of-step checks (World::checkEnd) find in a block of consecutive
// ranks: the activations and gradients still held, by the statement that stored them, and
// each layer's updated weights. A run's lanes tally their own ranks, each on its own thread,
// once every rank has finished (World::tallyEnd); added up in lane order (add), the tallies
// are those of one pass over every rank in order.
#pragma once

#include "sim/SlotDirectory.h"
#include "sim/Value.h"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace schedc::sim {

struct EndTally {
  // A slot still held; a warning names the first four, in order of rank, then index.
  struct Slot {
    int64_t rank;
    uint32_t array;
    SlotIndex index;
    bool operator<(const Slot &o) const { return std::tie(rank, index) < std::tie(o.rank, o.index); }
  };
  static constexpr size_t kSlotsNamed = 4;
  // The values of one kind one statement stored that are still held.
  struct Leftover {
    Kind kind;
    std::vector<Slot> first; // the kSlotsNamed smallest, sorted
    size_t count = 0;
    // Counts a slot of `rank` still held (ranks are tallied in order). Its name, `keyOf()`
    // (a StorageKey, built on demand: Storage::Held::key), is asked for only where it may be
    // among the first.
    template <class KeyOf> void note(int64_t rank, KeyOf &&keyOf) {
      ++count;
      if (first.size() == kSlotsNamed && first.back().rank < rank)
        return;
      const StorageKey key = keyOf();
      keep({rank, key.array, key.index});
    }

  private:
    void keep(Slot slot); // among the first, if it is
  };
  using Statement = std::tuple<uint32_t, uint32_t, uint32_t, int>; // file, line, column, kind
  // One layer's updated weights held at the end, over the ranks tallied.
  struct Final {
    int64_t total = 0;                 // the layer's shard count, as the last weight tallied says
    int64_t firstTotal = 0;            // as the first says (for add)
    bool any = false;                  // whether a weight was tallied
    std::vector<int64_t> shards;       // every rank's pieces, in any order
    bool inconsistent = false;         // a weight said another shard count than the one before it
    bool failed = false;               // an update of the layer failed: that error is the report
    bool dense = false, whole = false; // weights of the layer's dense part (Split::Dense) / of the rest

    void note(const Value &weight);
    void add(const Final &later); // a later lane's, as if its weights had been noted here
  };

  explicit EndTally(size_t layers = 0) : finals(layers), expertFinals(layers) {}
  // The statement's leftover of kind `kind`, made at its first value.
  Leftover &leftover(const Statement &statement, Kind kind);
  // Adds the tally of the ranks that follow this one's.
  void add(EndTally &&later);

  std::map<Statement, Leftover> leftovers;
  std::vector<Statement> order;    // statements in the order their first value was tallied
  std::vector<Final> finals;       // by layer
  std::vector<Final> expertFinals; // by layer: the routed experts' slices (Split::Experts)
  bool forged = false;             // an updated weight was forged (Value::forged)
};

} // namespace schedc::sim
