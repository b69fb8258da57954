// The final model's checks (`Model.check` of the original library): at the end of a step the
// updated weights held over all ranks must cover every layer once per shard — a mixture-of-
// experts layer's dense part and every slice of its routed experts — and be split one way.
// They read the tally of what each lane's ranks hold (World::tallyEnd, sim/EndTally).
#include "engine/World.h"

namespace schedc::sim {

// Every layer must end up updated exactly once on every shard: the updated weights held at
// the end, over all ranks, must cover each layer completely.
void World::checkFinalModel(const EndTally &tally) {
  forged_ |= tally.forged;
  if (stoppedRanks_ > 0) // the layers a stopped rank would have updated are its error's echo
    return;
  for (int64_t l = 0; l < model_.layers; ++l) {
    const EndTally::Final &f = tally.finals[l], &experts = tally.expertFinals[l];
    if (f.failed || experts.failed)
      continue;
    IntSet shards(f.shards); // sorted once: uniting piece by piece was quadratic in the ranks
    if (f.dense || experts.any)
      checkFinalExperts(l, f, experts);
    if (!f.total && !experts.any)
      record(Severity::Error, options_.scheduleAt, "never-updated",
             layerOf(l) + " is never updated: no rank holds an updated weight of it at the end", -1);
    else if (!f.total)
      record(Severity::Error, options_.scheduleAt, "never-updated",
             "the dense part of " + layerOf(l) +
                 " is never updated: ranks hold updated slices of its routed experts only",
             -1);
    else if (f.inconsistent)
      record(Severity::Error, options_.scheduleAt, "final-inconsistent",
             "the updated weights of " + layerOf(l) + " are split into different numbers of shards", -1);
    else if (static_cast<int64_t>(shards.size()) != f.total)
      record(Severity::Error, options_.scheduleAt, "final-incomplete",
             "the updated weights of " + layerOf(l) + " cover shards " + shards.str() + " of " +
                 std::to_string(f.total) + "; shards " + IntSet::range(0, f.total).minus(shards).str() +
                 " are never updated",
             -1);
  }
}

// A mixture-of-experts layer's sides (Split::Dense, Split::Experts): the dense part updated
// (checked with the whole layers) and every slice of the routed experts.
void World::checkFinalExperts(int64_t l, const EndTally::Final &dense, const EndTally::Final &experts) {
  const std::string layer = layerOf(l); // (only for an error)
  if (dense.dense && dense.whole)
    record(Severity::Error, options_.scheduleAt, "final-inconsistent",
           "ranks hold updated weights of the whole " + layer + " and of its dense part alone", -1);
  IntSet slices(experts.shards);
  if (!experts.any)
    record(Severity::Error, options_.scheduleAt, "never-updated",
           "the routed experts of " + layer + " are never updated: ranks hold updated weights of its dense part only",
           -1);
  else if (experts.inconsistent)
    record(Severity::Error, options_.scheduleAt, "final-inconsistent",
           "the updated routed experts of " + layer + " are split into different numbers of slices", -1);
  else if (static_cast<int64_t>(slices.size()) != experts.total)
    record(Severity::Error, options_.scheduleAt, "final-incomplete",
           "the updated routed experts of " + layer + " cover slices " + slices.str() + " of " +
               std::to_string(experts.total) + "; slices " + IntSet::range(0, experts.total).minus(slices).str() +
               " are never updated",
           -1);
}

} // namespace schedc::sim
