// Overlapped pairs: a rank runs the two sides of `overlap { first } with { second }` one
// after the other, logging their events without placing them, and places the pair as one
// block when it closes (cost::RankClock::placePair). The sides run at the same time on a
// real device, so they may not share a storage slot, and a side holds computations only:
// a message or a collective inside one would wait on other ranks in the middle of the pair
// (PyTorch's OVERLAP_F_B likewise holds a forward and a backward; its sends and receives
// are actions of their own).
#include "engine/World.h"

namespace schedc::sim {

void Rank::overlap(SourceRange at, PairPhase phase) {
  if (cancelled())
    return;
  switch (phase) {
  case PairPhase::Begin:
    if (pair_) {
      fatal(at, "an `overlap` inside another (through a procedure called in one): a pair has two sides, each run in "
                "order");
      return;
    }
    pair_ = std::make_unique<PendingPair>();
    pair_->at = at;
    if (world_.options_.recordTransfers)
      records_.pairs.push_back({figures_.events, 0, 0});
    return;
  case PairPhase::Second:
    SCHEDC_ASSERT(pair_ && !pair_->second, "a pair's second side without its first");
    pair_->second = true;
    if (world_.options_.recordTransfers)
      records_.pairs.back().second = figures_.events + pair_->events.size();
    return;
  case PairPhase::End:
    SCHEDC_ASSERT(pair_ && pair_->second, "a pair closed before its second side");
    closePair();
    return;
  }
}

void Rank::closePair() {
  std::unique_ptr<PendingPair> pair = std::move(pair_);
  std::vector<cost::PairEvent> events;
  events.reserve(pair->events.size());
  for (const PendingPair::Logged &e : pair->events)
    events.push_back(e.event);
  std::vector<cost::Placed> placed = clock_.placePair(events, world_.options_.overlapHidden);
  for (size_t i = 0; i < placed.size(); ++i) {
    PendingPair::Logged &e = pair->events[i];
    addToFigures(e.event.work, placed[i], e.held);
    keepEvent(e.event.work, placed[i], e.held, std::move(e.batches), e.site, e.flow);
  }
  if (world_.options_.recordTransfers)
    records_.pairs.back().end = figures_.events;
}

void Rank::touchInPair(uint32_t array, const SlotIndex &index, bool writes, SourceRange at) {
  PendingPair &pair = *pair_;
  if (!pair.second) {
    pair.firstSide.push_back({array, index, writes, at});
    return;
  }
  if (pair.reported)
    return;
  for (const PendingPair::Access &a : pair.firstSide) {
    if (a.array != array || a.index != index || (!a.writes && !writes))
      continue;
    auto verb = [](bool w) { return w ? "writes" : "reads"; };
    pair.reported = true;
    error(at, "overlap-shared",
          "the sides of an `overlap` run at the same time, so they cannot share storage: its second side " +
              std::string(verb(writes)) + " `" + slotName(array, index) + "`, which its first side " + verb(a.writes),
          {note(a.at, "the first side " + std::string(verb(a.writes)) + " it here")});
    return;
  }
}

bool Rank::refusedInPair(SourceRange at, const char *what, bool copy) {
  if (!pair_)
    return false;
  error(at, "overlap-communication",
        "`" + std::string(what) + "` inside an `overlap`: a pair's sides hold computations only (" +
            (copy ? "a copy between memory tiers runs on the transfers stream, which a pair's placement does not "
                    "place"
                  : "a message or a collective would wait on other ranks in the middle of the pair") +
            "); move it before or after the `overlap`");
  return true;
}

} // namespace schedc::sim
