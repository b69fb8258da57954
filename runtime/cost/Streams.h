// Streams — where a rank's work runs in time: the compute stream (forward, backward, loss,
// update), the collectives stream, the point-to-point stream and the transfers stream (copies
// between the device and host memory or NVMe: offload, prefetch; DeepSpeed's offload copies
// run on a stream of their own too), as the cuda backend runs them (cost/StreamOrder.h). Work on one stream runs in the
// schedule's order; work on different streams overlaps unless one waits for what another made. An event's stream
// follows from its class (support/ops/Operations.def); a cost model may instead run every
// event on the compute stream (one clock per rank, as the puzzle library does).
#pragma once

#include "ops/Operations.h"

#include <array>
#include <cstdint>

namespace schedc::cost {

enum class Stream : uint8_t { Compute, Collectives, PointToPoint, Transfers };
constexpr size_t kStreams = 4;

inline const char *streamName(Stream s) {
  constexpr const char *kNames[kStreams] = {"compute", "collectives", "point-to-point", "transfers"};
  return kNames[static_cast<size_t>(s)];
}

// The stream an event of kind `k` runs on when each class has its own.
inline Stream streamOfClass(EventKind k) {
  switch (eventInfo(k).eventClass) {
  case EventClass::Collective: return Stream::Collectives;
  case EventClass::PointToPoint: return Stream::PointToPoint;
  case EventClass::Transfer: return Stream::Transfers;
  case EventClass::Compute:
  case EventClass::Other: break;
  }
  return Stream::Compute;
}

// What a value or an event waits for on its rank: per stream, the index of the latest event
// on that stream that made one of its operands (-1: none). The latest is enough: events of
// one stream end in the order they run, so an earlier one ends no later. (32 bits: a rank
// logs far fewer events than that before its memory runs out; every value and event holds
// one of these.)
struct Producers {
  std::array<int32_t, kStreams> latest{-1, -1, -1, -1};

  static Producers of(Stream s, int64_t event) {
    Producers p;
    p.latest[static_cast<size_t>(s)] = static_cast<int32_t>(event);
    return p;
  }
  // What waits for both `a` and `b` waits for this.
  friend Producers merge(const Producers &a, const Producers &b) {
    Producers p;
    for (size_t s = 0; s < kStreams; ++s)
      p.latest[s] = a.latest[s] > b.latest[s] ? a.latest[s] : b.latest[s];
    return p;
  }
};

} // namespace schedc::cost
