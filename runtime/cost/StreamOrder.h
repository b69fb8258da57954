// StreamOrder — how work is ordered on a rank's several streams (cost/Streams.h), as the
// cuda backend enqueues it; the simulator's placement (cost/Placement.h) times events by the
// same rule (1) below, with each operand's maker in place of CUDA's events. The streams: the
// compute stream (every GEMM and kernel, in the schedule's order), one for collectives, and
// one per point-to-point channel. Work off the compute stream overlaps compute wherever the schedule
// allows: a collective waits only for the compute that made its operands, compute waits for
// a collective's or a receive's result only when it first uses it, and nothing waits for a
// send except the free of what it sends.
//
// A device buffer is written once, by the work that makes it, and then only read; its
// StreamUses say which stream made it (with an event after that work, off the compute
// stream) and every stream that has used it since (with an event after its last use
// there). Rules: (1) work on stream S that uses a buffer S has not used before first waits
// for the buffer to be made — for the compute stream's work so far (one event for all such
// operands) or for the maker's event; (2) a buffer is freed on one stream after it waits
// for every other stream's last use (the compute stream's work so far stands for the
// compute stream's uses); the free goes on a channel if one used the buffer, else on the
// collectives stream if it did, else on the compute stream — so neither the compute nor the
// collectives stream ever waits for a send, which completes only when its receiver posts
// the receive: a host that waits for those two streams (--trace) never waits for another
// host. Apart from CUDA (a template over the device: its streams, events, record and
// wait) so that a unit test checks these rules on a model of streams
// (test/unit/StreamOrderTest.cpp).
#pragma once

#include <vector>

namespace schedc::cost {

template <class Device> struct StreamUses {
  using Stream = typename Device::Stream;
  using Event = typename Device::Event;
  struct Use {
    Stream stream{};
    Event after{}; // recorded after its last use there (empty on the compute stream)
  };
  Stream madeOn{};
  Event made{};          // recorded after the work that made it (empty on the compute stream)
  std::vector<Use> uses; // every stream that has used it, its maker first
};

template <class Device> class StreamOrder {
public:
  using Stream = typename Device::Stream;
  using Event = typename Device::Event;
  using Uses = StreamUses<Device>;

  StreamOrder(Device &device, Stream compute, Stream collectives)
      : device_(device), compute_(compute), collectives_(collectives) {}
  Stream compute() const { return compute_; }
  Stream collectives() const { return collectives_; }

  // A new buffer, made by work about to be enqueued on `s`.
  static void made(Uses &u, Stream s) {
    u.madeOn = s;
    u.made = {};
    u.uses.assign(1, typename Uses::Use{s, {}});
  }

  // Before enqueuing work on `s` that reads `operands` (its results are new buffers made on
  // `s`): rule (1).
  void enter(Stream s, const std::vector<Uses *> &operands) {
    Event computeSoFar{};
    for (Uses *u : operands) {
      if (find(*u, s))
        continue;
      if (u->madeOn == compute_) {
        if (!computeSoFar)
          computeSoFar = device_.record(compute_);
        device_.wait(s, computeSoFar);
      } else {
        device_.wait(s, u->made);
      }
      u->uses.push_back({s, {}});
    }
  }

  // After enqueuing work on `s` that used `touched` (its operands and its results): off the
  // compute stream, one event after the work marks their last use there, and the results
  // as made.
  void leave(Stream s, const std::vector<Uses *> &touched) {
    if (s == compute_)
      return;
    Event done = device_.record(s);
    for (Uses *u : touched)
      if (typename Uses::Use *use = find(*u, s)) {
        use->after = done;
        if (u->madeOn == s && !u->made)
          u->made = done;
      }
  }

  // Where to free a buffer no one holds any more: rule (2); enqueues the waits and returns
  // the stream to free it on.
  Stream release(Uses &u) {
    const typename Uses::Use *last = &u.uses.front();
    for (const typename Uses::Use &use : u.uses)
      if (priority(use.stream) >= priority(last->stream))
        last = &use;
    Stream on = last->stream;
    for (const typename Uses::Use &use : u.uses) {
      if (use.stream == on)
        continue;
      device_.wait(on, use.stream == compute_ ? device_.record(compute_) : use.after);
    }
    return on;
  }

private:
  static typename Uses::Use *find(Uses &u, Stream s) {
    for (typename Uses::Use &use : u.uses)
      if (use.stream == s)
        return &use;
    return nullptr;
  }
  int priority(Stream s) const { return s == compute_ ? 0 : s == collectives_ ? 1 : 2; }

  Device &device_;
  Stream compute_, collectives_;
};

} // namespace schedc::cost
