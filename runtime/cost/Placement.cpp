// Placement implementation: a rank's clock places each event as it is logged.
#include "cost/Placement.h"

#include <algorithm>

namespace schedc::cost {

Number RankClock::ready(EventKind kind, const Producers &after) const {
  Number t = free_[static_cast<size_t>(model_->stream(kind))];
  for (int32_t maker : after.latest)
    if (maker >= 0)
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

const std::vector<Placed> &RankClock::placeCall(const std::vector<CallEvent> &call, CallScratch &scratch) {
  Number start = Number::integer(0);
  auto first = static_cast<int32_t>(ends_.size()); // the call's first event
  scratch.works.clear();
  for (const CallEvent &e : call) {
    Number t = free_[static_cast<size_t>(model_->stream(e.work.kind))];
    for (int32_t maker : e.after.latest)
      if (maker >= 0 && maker < first) // (the rank refuses a collective on the call's own results)
        t = Number::pythonMax(t, end(maker));
    start = Number::pythonMax(start, Number::pythonMax(t, e.allReady));
    scratch.works.push_back(e.work);
  }
  scratch.lengths.resize(call.size());
  model_->coalescedLengths(scratch.works, scratch.lengths);
  scratch.placed.clear();
  Number at = start;
  for (size_t i = 0; i < call.size(); ++i) {
    Placed p;
    p.stream = model_->stream(call[i].work.kind);
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
  auto first = static_cast<int32_t>(ends_.size()); // the pair's first event
  Number start = Number::integer(0), sides[2] = {Number::integer(0), Number::integer(0)};
  std::vector<Number> lengths;
  for (const PairEvent &e : pair) {
    Number t = free_[static_cast<size_t>(model_->stream(e.work.kind))];
    for (int32_t maker : e.after.latest)
      if (maker >= 0 && maker < first) // the pair's own events are inside the block
        t = Number::pythonMax(t, end(maker));
    start = Number::pythonMax(start, t);
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
