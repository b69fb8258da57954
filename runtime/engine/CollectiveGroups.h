// CollectiveGroups — where a run's collectives meet, and the sets of ranks they meet over. A
// group per set of members: the k-th call of every member meets in the group's instance k,
// and the last member to arrive completes it (sim/Collective.h checks and combines the
// inputs). A rank finds its group first among its lane's recent groups, then by its members.
// The sets of ranks every rank may hold — all ranks, a mesh axis, a range — are made once for
// every rank that names them, and kept to the run's end. In a parallel run (`parallel`) one
// lock guards the maps; a group's instances have a lock of their own.
#pragma once

#include "cost/CostModel.h"
#include "cost/Placement.h"
#include "engine/SpinLock.h"
#include "sim/Collective.h"
#include "sim/IntSet.h"
#include "sim/Value.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace schedc::sim {

class CollectiveGroups {
public:
  // One collective call of a group: the k-th call of every member meets here.
  struct Collective : CollectiveInputs {
    Collective(CollectiveKind k, size_t members) : CollectiveInputs(k, members), readyAt(members) {
      arrivals.reserve(members);
    }
    // When each member's event could start, by position: taken as it arrives, while its clock
    // is in cache (it logs nothing until the collective completes), folded in group order.
    std::vector<Number> readyAt;
    std::vector<uint32_t> arrivals; // on one thread: positions, in the order the members arrived
    // The members that have arrived (the last completes the call), and kAbandoned once a
    // member of a cancelled run left it before anyone could complete it (World::awaitCall).
    std::atomic<uint32_t> arrived{0};
    static constexpr uint32_t kAbandoned = uint32_t{1} << 31;
    std::atomic<size_t> taken{0}; // members that have taken their results
    std::atomic<bool> done{false};
    cost::CallReady ready;          // when every member is ready, once complete
    std::vector<Value> laneResults; // a parallel run's: `result` for each lane's members (World::forLane)
  };

  struct Group {
    SpinLock lock; // a parallel run's: held while a member finds its call, or the last retires it
    SetPtr members;
    std::vector<uint64_t> calls;      // collectives called so far, by position
    std::deque<Collective> instances; // instances[i] is call number base + i
    uint64_t base = 0;
    int32_t nodes = 0; // the nodes its members are on (cost::CostModel::nodeOf); 0: not yet counted
  };

  // The group last found for each (first member, size), a lane's own, tried first: a rank
  // calls its few groups again and again (Megatron's mesh on 16 384 ranks has 2 176 of them).
  static constexpr size_t kRecent = 1024;
  using Recent = std::array<Group *, kRecent>;

  // `ranks`: the run's; `keepCopies`: the run is on several lanes, whose threads must not count
  // a set every rank may hold (kept() keeps a copy counted by none).
  CollectiveGroups(int64_t ranks, bool keepCopies);

  // Every rank, shared, in order: the default group of collectives.
  const SetPtr &allRanks() const { return allRanks_; }
  // The group of `members`, made at its first call: looked for in `recent` first.
  Group &find(Recent &recent, const SetPtr &members, bool parallel);
  // The ranks first, first + stride, ... (`size` of them): one set for every rank that names
  // them, as a mesh axis (Rank::axisGroup) or a range (Rank::rangeGroup), which find() then
  // recognises by pointer.
  SetPtr rankSet(int64_t first, int64_t size, int64_t stride, bool parallel);
  // The nodes `g`'s members are on under `model`, counted once per group (1 for a model
  // without nodes).
  static int32_t nodesOf(Group &g, const cost::CostModel &model);
  // The members (ascending) of every group a collective was called over.
  std::vector<std::vector<int64_t>> memberLists() const;

private:
  // A set the run keeps to its end, which every rank may hold.
  SetPtr kept(SetPtr s);

  bool keepCopies_;
  std::vector<std::unique_ptr<const IntSet>> keptSets_; // freed after everything that holds them
  SetPtr allRanks_;
  std::unique_ptr<Group> allGroup_;
  std::map<std::vector<int64_t>, std::unique_ptr<Group>> groups_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, SetPtr> rankSets_;
  std::mutex lock_; // a parallel run's: groups_, allGroup_ and rankSets_
};

} // namespace schedc::sim
