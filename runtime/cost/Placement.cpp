// Placement implementation: a rank's clock places each event as it is logged.
#include "cost/Placement.h"

#include <algorithm>

namespace schedc::cost {

Number RankClock::ready(EventKind kind, const Producers &after) const {
  Number t = free_[static_cast<size_t>(model_->stream(kind))];
  const auto placed = static_cast<int32_t>(ends_.size());
  for (int32_t maker : after.latest)
    if (maker >= 0 && maker < placed) // (one not placed yet is of the pair or call placed with this one)
      t = Number::pythonMax(t, end(maker));
  return t;
}

Placed RankClock::place(const Work &work, const Producers &after, const AlsoWaits &also) {
  Placed p;
  p.stream = model_->stream(work.kind);
  p.start = ready(work.kind, after);
  if (also.what == AlsoWaits::For::Call)
    p.start = Number::pythonMax(p.start, also.time);
  else if (also.what == AlsoWaits::For::Message)
    p.start = Number::pythonMax(also.time, p.start);
  p.length = model_->length(work);
  Number end = p.start + p.length;
  free_[static_cast<size_t>(p.stream)] = end;
  ends_.push_back(end);
  return p;
}

const std::vector<Placed> &RankClock::placeCall(const CallEvents &call, CallScratch &scratch) {
  Number start = Number::integer(0);
  for (size_t i = 0; i < call.size(); ++i)
    start = Number::pythonMax(start, Number::pythonMax(ready(call.works[i].kind, call.after[i]), call.allReady[i]));
  scratch.lengths.resize(call.size());
  model_->coalescedLengths(call.works, scratch.lengths);
  scratch.placed.clear();
  Number at = start;
  for (size_t i = 0; i < call.size(); ++i) {
    Placed p;
    p.stream = model_->stream(call.works[i].kind);
    p.start = at;
    p.length = scratch.lengths[i];
    at = at + p.length;
    scratch.placed.push_back(p);
  }
  for (const Placed &p : scratch.placed) {
    free_[static_cast<size_t>(p.stream)] = at;
    ends_.push_back(at);
  }
  return scratch.placed;
}

std::vector<Placed> RankClock::placePair(const std::vector<PairEvent> &pair, double hidden) {
  Number start = Number::integer(0), sides[2] = {Number::integer(0), Number::integer(0)};
  std::vector<Number> lengths;
  for (const PairEvent &e : pair) {
    start = Number::pythonMax(start, ready(e.work.kind, e.after)); // (the pair's own events are inside the block)
    lengths.push_back(model_->length(e.work));
    sides[e.second ? 1 : 0] += lengths.back();
  }
  Number sum = sides[0] + sides[1];
  Number block = sum;
  if (hidden > 0) {
    double a = sides[0].asDouble(), b = sides[1].asDouble();
    block = Number::real(std::max(a, b) + (1 - hidden) * std::min(a, b));
  }
  double scale = hidden > 0 && sum.asDouble() > 0 ? block.asDouble() / sum.asDouble() : 1;
  Number end = start + block, at = start;
  std::vector<Placed> placed;
  for (size_t i = 0; i < pair.size(); ++i) {
    Placed p;
    p.stream = model_->stream(pair[i].work.kind);
    p.start = at;
    p.length = scale == 1 ? lengths[i] : Number::real(lengths[i].asDouble() * scale);
    at = at + p.length;
    placed.push_back(p);
    free_[static_cast<size_t>(p.stream)] = end;
    ends_.push_back(end);
  }
  return placed;
}

} // namespace schedc::cost
