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
  for (auto [ours, theirsAll] : {std::pair{&finals, &later.finals}, std::pair{&expertFinals, &later.expertFinals}})
    for (size_t layer = 0; layer < ours->size() && layer < theirsAll->size(); ++layer) {
      Final &mine = (*ours)[layer];
      Final &theirs = (*theirsAll)[layer];
      mine.failed |= theirs.failed;
      if (!theirs.any)
        continue;
      // As if their weights had been noted here one by one.
      mine.inconsistent |= theirs.inconsistent || (mine.total && mine.total != theirs.firstTotal);
      if (!mine.any)
        mine.firstTotal = theirs.firstTotal;
      mine.any = true;
      mine.dense |= theirs.dense;
      mine.whole |= theirs.whole;
      mine.total = theirs.total;
      mine.shards.insert(mine.shards.end(), theirs.shards.begin(), theirs.shards.end());
    }
  forged |= later.forged;
}

} // namespace schedc::sim
