// CollectiveGroups implementation: a lane's recent groups are indexed by (first member, size);
// a group is recognised by its members' set (a pointer, for the sets rankSet made) or, else,
// their elements.
#include "engine/CollectiveGroups.h"

namespace schedc::sim {

CollectiveGroups::CollectiveGroups(int64_t ranks, bool keepCopies) : keepCopies_(keepCopies) {
  allRanks_ = kept(makeSet(IntSet::range(0, ranks)));
}

SetPtr CollectiveGroups::kept(SetPtr s) {
  if (!keepCopies_ || s->counting() == IntSet::Counting::Never)
    return s;
  auto *owned = new IntSet(*s);
  owned->countAs(IntSet::Counting::Never);
  keptSets_.emplace_back(owned);
  return SetPtr(owned);
}

CollectiveGroups::Group &CollectiveGroups::find(Recent &recent, const SetPtr &members, bool parallel) {
  const std::vector<int64_t> &elems = members->elements();
  Group *&last = recent[static_cast<uint64_t>(elems.front() * 31 + static_cast<int64_t>(elems.size())) % kRecent];
  if (last && (last->members == members || last->members->elements() == elems))
    return *last;
  std::unique_lock<std::mutex> lock(lock_, std::defer_lock);
  if (parallel)
    lock.lock();
  auto init = [&](std::unique_ptr<Group> &g) -> Group & {
    if (!g) {
      g = std::make_unique<Group>();
      g->members = kept(members);
      g->calls.assign(members->size(), 0);
    }
    return *g;
  };
  last = members == allRanks_ || *members == *allRanks_ ? &init(allGroup_) : &init(groups_[elems]);
  return *last;
}

SetPtr CollectiveGroups::rankSet(int64_t first, int64_t size, int64_t stride, bool parallel) {
  std::unique_lock<std::mutex> lock(lock_, std::defer_lock);
  if (parallel)
    lock.lock();
  SetPtr &set = rankSets_[{first, size, stride}];
  if (!set) {
    std::vector<int64_t> members;
    for (int64_t k = 0; k < size; ++k)
      members.push_back(first + k * stride);
    set = kept(makeSet(std::move(members)));
  }
  return set;
}

int32_t CollectiveGroups::nodesOf(Group &g, const cost::CostModel &model) {
  if (g.nodes == 0) {
    g.nodes = 1;
    if (model.placesRanksOnNodes()) { // members ascend, and so do their nodes
      const std::vector<int64_t> &members = g.members->elements();
      for (size_t i = 1; i < members.size(); ++i)
        g.nodes += model.nodeOf(members[i]) != model.nodeOf(members[i - 1]);
    }
  }
  return g.nodes;
}

std::vector<std::vector<int64_t>> CollectiveGroups::memberLists() const {
  std::vector<std::vector<int64_t>> lists;
  if (allGroup_)
    lists.push_back(allGroup_->members->elements());
  for (const auto &[members, group] : groups_)
    lists.push_back(members);
  return lists;
}

} // namespace schedc::sim
