// EndTally: a statement's leftovers and a layer's final weights, tallied and added up.
#include "sim/EndTally.h"

#include <algorithm>

namespace schedc::sim {

void EndTally::Leftover::keep(Slot slot) {
  if (first.size() < kSlotsNamed || slot < first.back()) {
    first.insert(std::upper_bound(first.begin(), first.end(), slot), std::move(slot));
    if (first.size() > kSlotsNamed)
      first.pop_back();
  }
}

void EndTally::Final::note(const Value &weight) {
  if (total && total != weight.total)
    inconsistent = true;
  if (!any)
    firstTotal = weight.total;
  any = true;
  (weight.split == Split::Dense ? dense : whole) = true;
  total = weight.total;
  shards.insert(shards.end(), weight.shards->elements().begin(), weight.shards->elements().end());
}

void EndTally::Final::add(const Final &theirs) {
  failed |= theirs.failed;
  if (!theirs.any)
    return;
  // As if their weights had been noted here one by one.
  inconsistent |= theirs.inconsistent || (total && total != theirs.firstTotal);
  if (!any)
    firstTotal = theirs.firstTotal;
  any = true;
  dense |= theirs.dense;
  whole |= theirs.whole;
  total = theirs.total;
  shards.insert(shards.end(), theirs.shards.begin(), theirs.shards.end());
}

EndTally::Leftover &EndTally::leftover(const Statement &statement, Kind kind) {
  auto [it, inserted] = leftovers.emplace(statement, Leftover{kind, {}});
  if (inserted)
    order.push_back(statement);
  return it->second;
}

void EndTally::add(EndTally &&later) {
  for (const Statement &statement : later.order) {
    Leftover &mine = leftover(statement, later.leftovers.at(statement).kind);
    Leftover &theirs = later.leftovers.at(statement);
    mine.count += theirs.count;
    // Every rank of `later` follows every rank here: its slots come after these.
    for (Slot &slot : theirs.first)
      if (mine.first.size() < kSlotsNamed)
        mine.first.push_back(std::move(slot));
  }
  for (size_t layer = 0; layer < finals.size() && layer < later.finals.size(); ++layer) {
    finals[layer].add(later.finals[layer]);
    expertFinals[layer].add(later.expertFinals[layer]);
  }
  forged |= later.forged;
}

} // namespace schedc::sim
