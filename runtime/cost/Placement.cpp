// Placement implementation: a rank's clock places each event as it is logged.
#include "cost/Placement.h"

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
  ends_.emplace_back() = end;
  return p;
}

} // namespace schedc::cost
