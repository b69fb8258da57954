// Placement implementation: one pass over the events in the order they were logged, with
// each rank's streams' free times.
#include "cost/Placement.h"

#include <array>
#include <optional>

namespace schedc::cost {

namespace {

class Placer {
public:
  Placer(const CostModel &model, const RunGraph &graph, int64_t ranks,
         const std::function<TimedEvent &(EventRef)> &event)
      : model_(model), graph_(graph), event_(event), free_(static_cast<size_t>(ranks)),
        callStart_(graph.collectives.size()) {
    for (auto &streams : free_)
      streams.fill(Number::integer(0));
  }

  void placeAll() {
    for (EventRef ref : graph_.order)
      placeOne(ref);
  }

private:
  Number end(EventRef ref) const {
    const TimedEvent &e = event_(ref);
    return e.start + e.length;
  }

  // When `ref` could start: its stream is free and its operands are made.
  Number ready(EventRef ref) const {
    const TimedEvent &e = event_(ref);
    Number t = free_[static_cast<size_t>(ref.rank)][static_cast<size_t>(model_.stream(e.kind))];
    for (int32_t maker : e.after.latest)
      if (maker >= 0)
        t = Number::pythonMax(t, end({ref.rank, maker}));
    return t;
  }

  // When every member of collective call `c` is ready (computed once, at its first member).
  Number callStart(int64_t c) {
    std::optional<Number> &start = callStart_[static_cast<size_t>(c)];
    if (!start)
      for (EventRef member : graph_.collectives[static_cast<size_t>(c)])
        if (member.index >= 0) // else cut short before it took part
          start = start ? Number::pythonMax(*start, ready(member)) : ready(member);
    return *start;
  }

  void placeOne(EventRef ref) {
    TimedEvent &e = event_(ref);
    Number start = ready(ref);
    if (e.collective >= 0) {
      start = Number::pythonMax(start, callStart(e.collective));
    } else if (e.flow >= 0) {
      EventRef send = graph_.sends[static_cast<size_t>(e.flow)];
      if (send.rank != ref.rank || send.index != ref.index) // a receive
        start = Number::pythonMax(end(send), start);
    }
    e.stream = model_.stream(e.kind);
    e.start = start;
    e.length = model_.length(e);
    free_[static_cast<size_t>(ref.rank)][static_cast<size_t>(e.stream)] = e.start + e.length;
  }

  const CostModel &model_;
  const RunGraph &graph_;
  const std::function<TimedEvent &(EventRef)> &event_;
  std::vector<std::array<Number, kStreams>> free_; // by rank and stream: when it is next free
  std::vector<std::optional<Number>> callStart_;   // by collective call, once its first member is placed
};

} // namespace

void place(const CostModel &model, const RunGraph &graph, int64_t ranks,
           const std::function<TimedEvent &(EventRef)> &event) {
  Placer(model, graph, ranks, event).placeAll();
}

} // namespace schedc::cost
