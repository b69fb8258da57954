// Placement — puts a run's events in time under a cost model, each the moment its rank logs
// it (an overlapped pair's, and a coalesced call's — a `group`'s collectives —, together
// when the pair or the group closes: placePair, placeCall). The sim backend tells a rank's clock what each event is
// (cost::Work) and what it waits for: the events of its rank that made its operands (per stream, the latest), for a
// collective every member's readiness, for a receive its send. The clock gives the event its
// stream, start and length by the rules the cuda backend runs by (cost/StreamOrder.h):
//   - an event starts when its stream is free and the events that made its operands have
//     ended: ready = max(stream free, their ends), the stream's time first;
//   - a collective starts on every member at once, when the last member is ready: the
//     members' ready times folded with max in group order (CallReady), then max(own ready,
//     that);
//   - a receive starts when its send has ended and it is ready: max(send end, ready);
//   - a coalesced call (a `group`'s collectives: NCCL's group, DDP's bucket) starts when
//     every one of them could, and runs them back to back as one call
//     (CostModel::coalescedLengths); the cuda backend still issues them one by one.
// Python's max keeps its first argument on ties, which decides only whether a figure prints
// as an integer (SEMANTICS.md, "Ties"). Events can be placed as they are logged because the
// log order is a topological order of these waits: a rank logs a collective's event only
// after every member has called it (none has logged anything since, so each member's
// readiness is known when the last one calls), and a receive's only after its send.
// A clock keeps each event's end (8 bytes and a bit: NumberLog), not the event: an operand
// may have been made any number of events earlier.
#pragma once

#include "cost/CostModel.h"
#include "numbers/NumberLog.h"

#include <array>
#include <vector>

namespace schedc::cost {

// Where an event runs: its stream, start and length.
struct Placed {
  Stream stream = Stream::Compute;
  Number start, length;
};

// Besides its stream and its operands, what an event waits for.
struct AlsoWaits {
  enum class For : uint8_t { Nothing, Call, Message };
  For what = For::Nothing;
  Number time; // Call: when every member of the call is ready; Message: when its send ended

  static AlsoWaits call(Number allReady) { return {For::Call, allReady}; }
  static AlsoWaits message(Number sendEnd) { return {For::Message, sendEnd}; }
};

// When every member of a collective call is ready: their ready times joined in group order.
class CallReady {
public:
  void join(const Number &memberReady) {
    time_ = joined_ ? Number::pythonMax(time_, memberReady) : memberReady;
    joined_ = true;
  }
  const Number &time() const { return time_; }

private:
  Number time_;
  bool joined_ = false;
};

// An event of an overlapped pair (`overlap { first } with { second }`), placed with the
// rest of its pair when the pair closes.
struct PairEvent {
  Work work;
  Producers after;
  bool second = false; // of the pair's second side
};

// The collectives of a coalesced call, placed together when their group closes: by event,
// what it is, what made its operands, and when every member of its call was ready (CallReady).
struct CallEvents {
  std::vector<Work> works;
  std::vector<Producers> after;
  std::vector<Number> allReady;

  size_t size() const { return works.size(); }
  void push(const Work &work, const Producers &made, const Number &ready) {
    works.push_back(work);
    after.push_back(made);
    allReady.push_back(ready);
  }
  void clear() {
    works.clear();
    after.clear();
    allReady.clear();
  }
};
// What placeCall fills, kept by its caller from one call to the next.
struct CallScratch {
  std::vector<Number> lengths;
  std::vector<Placed> placed;
};

// One rank's streams in time: when each is next free, and when each event logged so far ends.
class RankClock {
public:
  explicit RankClock(const CostModel &model) : model_(&model) { free_.fill(Number::integer(0)); }

  // When an event of `kind` that waits for `after` could start on this rank (of `after`, an
  // event not placed yet is of the pair or the call placed together with this one: not waited for).
  Number ready(EventKind kind, const Producers &after) const;
  // Places the rank's next event (index: the number placed before it).
  Placed place(const Work &work, const Producers &after, const AlsoWaits &also = {});
  // Places the events of an overlapped pair, the rank's next events, in their order, as one
  // block (DualPipe's F&B, PyTorch's OVERLAP_F_B): it starts when every event of it could
  // (the streams it uses free, what each waits for outside the pair ended) and takes
  // F&B = max(a, b) + (1 - hidden) min(a, b), a and b the lengths of its sides' events
  // summed: `hidden` is the share of the shorter side the pair hides (0: the sum, as
  // without the pair; 1: the longer side alone). Its events are laid out in the block in
  // order, first side then second, their lengths scaled to fill it; each ends, for what
  // waits for it, when the block ends.
  std::vector<Placed> placePair(const std::vector<PairEvent> &pair, double hidden);
  // When the rank's event `event` ends.
  Number end(int32_t event) const { return ends_[static_cast<size_t>(event)]; }
  // When the event placed last ends (one must have been).
  Number lastEnd() const { return ends_.back(); }

  // Places the collectives of one coalesced call (a `group`'s: DDP's bucket), the rank's
  // next events, in their order: the call starts when all of them could (each one's operands
  // made, the stream free, every member ready) and is one NCCL call over their bytes
  // (CostModel::coalescedLengths); each ends, for what waits for it, when the call ends.
  const std::vector<Placed> &placeCall(const CallEvents &call, CallScratch &scratch);

private:
  const CostModel *model_;
  std::array<Number, kStreams> free_; // when each stream is next free
  NumberLog ends_;                    // by event
};

} // namespace schedc::cost
