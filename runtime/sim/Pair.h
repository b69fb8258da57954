// Pair — what a rank keeps while it runs an overlapped pair (`overlap { first } with
// { second }`): the pair's events, logged but not yet placed in time (the pair is placed
// as one block when it closes: cost::RankClock::placePair), each with what its rank held
// when it was logged; and the storage the first side touched, so that the second side
// touching the same slot — the two sides run at the same time — is an error.
#pragma once

#include "cost/Placement.h"
#include "numbers/Number.h"
#include "sim/Bytes.h"
#include "sim/IntSet.h"
#include "sim/Sites.h"
#include "sim/SlotDirectory.h"

#include <memory>
#include <vector>

namespace schedc::sim {

// What a rank holds at one moment, as its figures sample it.
struct HeldSample {
  Number memory;        // the puzzle's units
  double bytes = 0;     // under the byte model
  ByteShares shares{};  // the same by share
  int64_t inFlight = 0; // micro-batches with activations held
  int64_t activationMemory = 0;
  std::array<int64_t, kTiers> payloadBytes{-1, -1, -1}; // real data by tier (measured runs only)
  double hostBytes = 0, nvmeBytes = 0;                  // under the byte model, held off the device
};

struct PendingPair {
  struct Logged {
    cost::PairEvent event;
    SetPtr batches;
    Sites::Id site = 0;
    int32_t flow = -1;
    HeldSample held;
  };
  // A slot the first side read or wrote (stored or freed), and where.
  struct Access {
    uint32_t array;
    SlotIndex index;
    bool writes;
    SourceRange at;
  };

  SourceRange at;        // the `overlap` statement
  bool second = false;   // running the second side
  bool reported = false; // a shared slot was reported (once a pair)
  std::vector<Logged> events;
  std::vector<Access> firstSide;
};

} // namespace schedc::sim
