// Placement — puts a run's events in time under a cost model. The sim backend records, for
// each event, what it is (cost::Work) and what it waits for: the events of its rank that
// made its operands (per stream, the latest), for a collective every member's part of the
// same call, for a receive its send. Placement then gives each event its stream, start and
// length by the rules the cuda backend runs by (cost/StreamOrder.h):
//   - an event starts when its stream is free and the events that made its operands have
//     ended: ready = max(stream free, their ends), the stream's time first;
//   - a collective starts on every member at once, when the last member is ready: the
//     members' ready times folded with max in group order, then max(own ready, that);
//   - a receive starts when its send has ended and it is ready: max(send end, ready).
// Python's max keeps its first argument on ties, which decides only whether a figure prints
// as an integer (SEMANTICS.md, "Ties"). The order the events were logged in is a topological
// order of these waits (a rank logs a collective's event only after every member has
// called it, and a receive's only after its send), so one pass in that order places all.
#pragma once

#include "cost/CostModel.h"

#include <functional>
#include <vector>

namespace schedc::cost {

// An event: the index-th of rank `rank`.
struct EventRef {
  int32_t rank = -1;
  int32_t index = -1; // as in Producers
};

// One event as the time layer sees it: what it is, what it waits for, and, once placed,
// where it runs.
struct TimedEvent : Work {
  Producers after; // the events of its rank that made its operands
  Stream stream = Stream::Compute;
  int32_t collective = -1; // a collective's call: an index into RunGraph::collectives
  int32_t flow = -1;       // a send and the receive of its message share it: an index into RunGraph::sends
  Number start, length;
};

// What a run records beside its events for placing them.
struct RunGraph {
  std::vector<EventRef> order;                    // every event, in the order it was logged
  std::vector<std::vector<EventRef>> collectives; // each collective call's member events, in group order
  std::vector<EventRef> sends;                    // by flow: the send's event

  // A new collective call of `members` ranks; its members' events are filled in as logged.
  int64_t addCollective(size_t members) {
    collectives.emplace_back(members);
    return static_cast<int64_t>(collectives.size()) - 1;
  }
};

// Gives every event of `graph` its stream, start and length under `model`. `event` finds an
// event's record; a member that never logged its part of a call (a run cut short) is left
// out of the call.
void place(const CostModel &model, const RunGraph &graph, int64_t ranks,
           const std::function<TimedEvent &(EventRef)> &event);

} // namespace schedc::cost
