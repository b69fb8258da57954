// Collective implementation: the checks of a complete call's inputs and what they combine
// into, each a function of the inputs and the group (the rendezvous that gathers them is
// engine/Communication.cpp's).
#include "sim/Collective.h"

#include "diagnostics/InternalError.h"

#include <algorithm>
#include <functional>

namespace schedc::sim {

bool gathers(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllGather: return true;
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll: return false;
  }
  SCHEDC_UNREACHABLE("a collective that neither gathers nor reduces");
}

bool scatters(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::ReduceScatter: return true;
  case CollectiveKind::AllReduce:
  case CollectiveKind::AllGather:
  case CollectiveKind::AllToAll: return false;
  }
  SCHEDC_UNREACHABLE("a collective whose result is neither whole nor a shard");
}

// An all-reduce takes weight gradients (a tensor-parallel part's too) and tensor-parallel
// partial sums; a reduce-scatter weight gradients and partial sums (which it splits along the
// sequence); an all-gather weights' shards and activations' sequence shards. A tensor-parallel
// part's gradient is reduce-scattered into shards of the part, which all-gather back into it
// (the distributed optimizer: ZeRO over the data-parallel replicas of a part). An all-to-all
// takes the tokens of a mixture-of-experts layer on their way to the experts or back from
// them (exchangedSplit).
bool takes(CollectiveKind k, const Value &v) {
  bool activation = v.kind == Kind::Activation || v.kind == Kind::ActGrad;
  switch (k) {
  case CollectiveKind::AllGather: return activation ? v.split == Split::Sequence : v.kind == Kind::Weight;
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter: return activation ? v.split == Split::PartialSum : v.kind == Kind::WeightGrad;
  case CollectiveKind::AllToAll: return exchangedSplit(v.kind, v.split).has_value();
  }
  SCHEDC_UNREACHABLE("a collective that takes nothing");
}

const char *whatItTakes(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllGather: return "a weight's shards or an activation's sequence shards";
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter: return "a weight gradient or a tensor-parallel partial sum";
  case CollectiveKind::AllToAll:
    return "a router's output or the experts' output (out to the experts, back from them), or the gradient of a "
           "layer's output or of its experts' input";
  }
  SCHEDC_UNREACHABLE("a collective that takes nothing");
}

std::optional<Split> exchangedSplit(Kind kind, Split split) {
  bool activation = kind == Kind::Activation;
  if (kind != Kind::Activation && kind != Kind::ActGrad)
    return std::nullopt;
  switch (split) {
  case Split::Routed: return activation ? std::optional(Split::Dispatched) : std::nullopt;
  case Split::ExpertOutput: return activation ? std::optional(Split::None) : std::nullopt;
  case Split::None: return activation ? std::nullopt : std::optional(Split::ExpertOutput);
  case Split::Dispatched: return activation ? std::nullopt : std::optional(Split::Routed);
  case Split::Part:
  case Split::PartialSum:
  case Split::Sequence:
  case Split::Dense:
  case Split::Experts: return std::nullopt;
  }
  SCHEDC_UNREACHABLE("a split neither sent out nor brought back");
}

std::string groupName(const IntSet &members, int64_t ranks) {
  return static_cast<int64_t>(members.size()) == ranks ? "all ranks" : "ranks " + members.str();
}

namespace {

// "allreduce of layer 3": how the messages about a call begin.
std::string ofLayer(const CollectiveInputs &c) {
  return std::string(collectiveName(c.kind)) + " of layer " + std::to_string(c.layer);
}

// How many members ahead combine asks for their values' memory (see there).
constexpr size_t kAhead = 8;

void prefetchElements(const SetPtr &s) {
  if (s)
    __builtin_prefetch(s->elements().data());
}

// The elements of `all` (the members' pieces in group order, member i's from starts[i]) that
// come in more than once, each once for every repeat, and the higher of the two members
// that hold the lowest of them.
struct Overlap {
  std::vector<int64_t> twice;
  int64_t secondOwner = -1;
};

Overlap overlapOf(const std::vector<int64_t> &all, const std::vector<size_t> &starts, const IntSet &members) {
  std::vector<int64_t> owner(all.size());
  for (size_t i = 0; i + 1 < starts.size(); ++i)
    std::fill(owner.begin() + starts[i], owner.begin() + starts[i + 1], members.elements()[i]);
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return all[a] < all[b]; });
  Overlap overlap;
  for (size_t i = 1; i < order.size(); ++i)
    if (all[order[i]] == all[order[i - 1]]) {
      overlap.twice.push_back(all[order[i]]);
      if (overlap.secondOwner < 0)
        overlap.secondOwner = std::max(owner[order[i]], owner[order[i - 1]]);
    }
  return overlap;
}

// A collective over the pieces of one activation (or activation gradient: same layer and
// micro-batches): tensor-parallel partial sums summed (all-reduce, reduce-scatter) or
// sequence shards gathered (all-gather). Each piece must come in once; the result holds
// the pieces united, and is whole once all are in.
Value unitePieces(const CollectiveInputs &c, const IntSet &members, bool poisoned, const Failure &fail) {
  const Value &first = *c.inputs[0];
  bool gather = gathers(c.kind);
  const char *code = gather ? "collective-sequence" : "collective-partials";
  std::vector<int64_t> pieces;
  for (size_t i = 0; i < c.inputs.size() && !poisoned; ++i) {
    const Value &v = *c.inputs[i];
    if (v.total != first.total || *v.batches != *first.batches) {
      fail(code, [&] {
        return ofLayer(c) +
               (gather ? " gathers sequence shards of different micro-batches or shard counts (rank "
                       : " sums partial sums of different micro-batches or part counts (rank ") +
               std::to_string(members.elements()[i]) + " has " + v.describe() + ", rank " +
               std::to_string(members.elements()[0]) + " " + first.describe() + ")";
      });
      poisoned = true;
    }
    pieces.insert(pieces.end(), v.shards->elements().begin(), v.shards->elements().end());
  }
  Value out = first;
  out.poisoned = poisoned;
  if (poisoned)
    return out;
  std::sort(pieces.begin(), pieces.end());
  if (auto twice = std::adjacent_find(pieces.begin(), pieces.end()); twice != pieces.end()) {
    fail(code, [&] {
      std::string piece = std::to_string(*twice) + " of " + std::to_string(first.total);
      return ofLayer(c) + (gather ? " receives sequence shard " + piece + " from more than one rank"
                                  : " adds tensor-parallel part " + piece + " more than once");
    });
    out.poisoned = true;
    return out;
  }
  IntSet united(std::move(pieces));
  if (static_cast<int64_t>(united.size()) == first.total) { // every piece: the whole
    out.sequenceGathered = gather;
    out.split = Split::None;
    out.shards = emptySet();
    out.total = 1;
  } else {
    out.shards = setOf(std::move(united));
  }
  return out;
}

// An all-to-all (docs/language.md, "Experts"): every member's tokens of one side of one layer
// go out to the group's experts (a dispatch: each member's micro-batches once, the result
// holding all of them, a 1/n share each), or come back from them (a combine: every member
// holding the same dispatch, over the group it was dispatched over, in its place).
Value exchangeTokens(const CollectiveInputs &c, const IntSet &members, int64_t ranks, bool poisoned,
                     const Failure &fail) {
  const Value &first = *c.inputs[0];
  const auto &ids = members.elements();
  const int64_t n = static_cast<int64_t>(c.inputs.size());
  auto rank = [&](size_t i) { return "rank " + std::to_string(ids[i]); };
  for (size_t i = 1; i < c.inputs.size() && !poisoned; ++i)
    if (c.inputs[i]->split != first.split) {
      fail("alltoall-side", [&] {
        return ofLayer(c) + " over " + groupName(members, ranks) + " exchanges " + c.inputs[i]->describe() + " (" +
               rank(i) + ") with " + first.describe() + " (" + rank(0) +
               "): every member sends the same side of the layer (all dispatch, or all combine)";
      });
      poisoned = true;
    }
  Value out = first;
  out.poisoned = poisoned;
  const bool dispatch = !atExperts(first.split);
  std::optional<Split> after = exchangedSplit(first.kind, first.split);
  SCHEDC_ASSERT(after || poisoned, "an all-to-all of a value it does not take (Rank::collectiveInput poisons those)");
  out.split = after.value_or(first.split); // (a poisoned input's stays: nothing is checked on it)
  if (dispatch) {
    std::vector<int64_t> all;
    for (size_t i = 0; i < c.inputs.size() && !poisoned; ++i)
      all.insert(all.end(), c.inputs[i]->batches->elements().begin(), c.inputs[i]->batches->elements().end());
    std::sort(all.begin(), all.end());
    if (auto twice = std::adjacent_find(all.begin(), all.end()); twice != all.end() && !poisoned) {
      fail("collective-overlap", [&] {
        return ofLayer(c) + " dispatches the tokens of micro-batch " + std::to_string(*twice) +
               " from more than one rank";
      });
      out.poisoned = true;
    }
    all.erase(std::unique(all.begin(), all.end()), all.end());
    out.batches = setOf(IntSet(std::move(all)));
    out.total = n;
    out.shards = emptySet(); // (each member's own micro-batches: resultFor)
    return out;
  }
  std::vector<int64_t> origins;
  for (size_t i = 0; i < c.inputs.size() && !out.poisoned; ++i) {
    const Value &v = *c.inputs[i];
    if (v.total != n || *v.batches != *first.batches || v.step != static_cast<int64_t>(i)) {
      fail("alltoall-group", [&] {
        return ofLayer(c) + " brings tokens back over " + groupName(members, ranks) + ", but " + rank(i) + " holds " +
               v.describe() + (i ? ", " + rank(0) + " " + first.describe() : "") +
               ": combine over the group that dispatched them (" + rank(i) + "'s tokens came over a group of " +
               std::to_string(v.total) + " ranks, where it was member " + std::to_string(v.step) + ")";
      });
      out.poisoned = true;
    }
    origins.insert(origins.end(), v.shards->elements().begin(), v.shards->elements().end());
  }
  std::sort(origins.begin(), origins.end());
  if (!out.poisoned &&
      (std::adjacent_find(origins.begin(), origins.end()) != origins.end() || IntSet(origins) != *first.batches)) {
    fail("alltoall-group", [&] {
      std::string sent;
      for (size_t i = 0; i < c.inputs.size(); ++i)
        sent += (i ? ", " : "") + rank(i) + " sent " + c.inputs[i]->shards->str();
      return ofLayer(c) + " brings back the tokens of micro-batches " + first.batches->str() +
             " to ranks that did not " + "dispatch them together (" + sent +
             "): combine over the group that dispatched them";
    });
    out.poisoned = true;
  }
  out.total = 1;
  out.step = 0;
  out.shards = emptySet();
  return out;
}

[[gnu::noinline, gnu::cold]] void reportMismatch(const CollectiveInputs &c, const IntSet &members, int64_t ranks,
                                                 const ReportError &report, size_t i) {
  const auto &ids = members.elements();
  bool otherCall = c.kinds[i] != c.kind;
  std::string where = groupName(members, ranks);
  std::string me = "rank " + std::to_string(ids[i]), first = "rank " + std::to_string(ids[0]);
  if (otherCall) {
    report(c.at[i], "collective-mismatch",
           me + " calls " + collectiveName(c.kinds[i]) + " over " + where + " where " + first + " calls " +
               collectiveName(c.kind),
           {note(c.at[0], first + " calls " + collectiveName(c.kind) + " here")});
  } else {
    report(c.at[i], "collective-mismatch",
           me + " calls " + collectiveName(c.kind) + " of layer " + std::to_string(c.inputs[i]->layer) + " over " +
               where + " where " + first + " calls it for layer " + std::to_string(c.layer),
           {note(c.at[0], first + "'s " + ofLayer(c) + " is here")});
  }
}

// Members that coalesce a call differently: NCCL fuses a group's collectives on each rank,
// and the call's time is one for all of its members.
[[gnu::noinline, gnu::cold]] void reportCoalescing(const CollectiveInputs &c, const IntSet &members, int64_t ranks,
                                                   const ReportError &report, size_t i) {
  const auto &ids = members.elements();
  size_t in = c.coalesced[i] ? i : 0, alone = c.coalesced[i] ? 0 : i;
  auto who = [&](size_t p) { return "rank " + std::to_string(ids[p]); };
  report(c.at[in], "collective-coalesced",
         who(in) + " issues " + ofLayer(c) + " over " + groupName(members, ranks) +
             " in one call with its collective before it (a `group`), where " + who(alone) +
             " issues it as a call of its own: every member groups a call's collectives alike",
         {note(c.at[alone], who(alone) + "'s is here")});
}

// Each member's value checked against the first's, and its shards (a gather) or micro-batches
// (a reduction) appended to `all`, member i's from starts[i]; stops once `poisoned`.
void collectElements(const CollectiveInputs &c, const IntSet &members, const bool &poisoned, const Failure &fail,
                     std::vector<int64_t> &all, std::vector<size_t> &starts) {
  size_t n = c.inputs.size();
  const Value &first = *c.inputs[0];
  for (size_t i = 0; i < n && !poisoned; ++i) {
    const Value &v = *c.inputs[i];
    if (i + kAhead < n)
      prefetchElements(gathers(c.kind) ? c.inputs[i + kAhead]->shards : c.inputs[i + kAhead]->batches);
    starts.push_back(all.size());
    auto who = [&] { return "rank " + std::to_string(members.elements()[i]); };
    if (v.split != first.split) // (a mixture-of-experts side's slices against the whole layer's)
      fail("collective-shards", [&] {
        auto part = [](const Value &x) {
          return x.split == Split::None && x.complete() ? "the whole layer" : x.slices();
        };
        return ofLayer(c) + " combines " + part(first) + " (rank " + std::to_string(members.elements()[0]) + ") with " +
               part(v) + " (" + who() + "): different parts of the layer";
      });
    else if (gathers(c.kind)) {
      if (v.total != first.total || v.step != first.step)
        fail("collective-shards", [&] {
          return ofLayer(c) + " combines weights of different shard counts or steps (" + who() + " has " +
                 v.describe() + ")";
        });
      all.insert(all.end(), v.shards->elements().begin(), v.shards->elements().end());
    } else {
      if (v.total != first.total || *v.shards != *first.shards)
        fail("collective-shards", [&] {
          return ofLayer(c) + " sums gradients of different shards (" + who() + " has " + v.describe() + ")";
        });
      else if (scatters(c.kind) && isSlice(v.split) && singleSlice(*v.shards, v.total).first < 0)
        fail("collective-shards", [&] {
          return ofLayer(c) + " needs the gradient of one whole " +
                 (v.split == Split::Part ? "tensor-parallel part" : "slice of the routed experts") + ", but " + who() +
                 " has " + v.describe();
        });
      else if (scatters(c.kind) && !isSlice(v.split) && !v.complete())
        fail("collective-shards",
             [&] { return ofLayer(c) + " needs complete gradients, but " + who() + " has " + v.describe(); });
      all.insert(all.end(), v.batches->elements().begin(), v.batches->elements().end());
    }
  }
  starts.push_back(all.size());
}

// The members' elements united; one that comes in more than once is an overlap (reported).
IntSet uniteElements(const CollectiveInputs &c, const IntSet &members, std::vector<int64_t> all,
                     const std::vector<size_t> &starts, const Failure &fail) {
  // Members' pieces mostly come in ascending order (ddp's micro-batches, fsdp's shards):
  // then none comes twice, and there is nothing to sort (an all-reduce over 1024 ranks
  // spent more than half of its completion sorting).
  if (std::adjacent_find(all.begin(), all.end(), std::greater_equal<>()) != all.end()) {
    auto [twice, secondOwner] = overlapOf(all, starts, members);
    if (!twice.empty()) {
      if (gathers(c.kind))
        fail("collective-overlap",
             [&] { return ofLayer(c) + " receives shards " + IntSet(twice).str() + " from more than one rank"; });
      else
        fail("collective-overlap", [&] {
          return ofLayer(c) + " sums the gradient of micro-batches " + IntSet(twice).str() + " more than once (rank " +
                 std::to_string(secondOwner) + " has it too)";
        });
    }
  }
  return IntSet(std::move(all));
}

// What a gather or a reduction of flat values (weights, their gradients) makes of `first`
// and the members' elements united.
Value flatResult(const CollectiveInputs &c, const Value &first, IntSet united) {
  Value out = first;
  if (!gathers(c.kind)) {
    out.batches = setOf(std::move(united));
  } else if (!isSlice(first.split)) {
    out.shards = setOf(std::move(united));
  } else { // a slice's shards gathered: the slice itself (a part's: the whole layer once every part is in)
    auto [slice, slices] = singleSlice(united, first.total);
    if (slice < 0) {
      out.shards = setOf(std::move(united));
    } else {
      out.shards = singleSet(slice);
      out.total = slices;
      if (slices == 1 && first.split == Split::Part)
        out.split = Split::None;
    }
  }
  return out;
}

} // namespace

// Computes the result of a complete collective, reporting problems that only the whole
// group shows (different shards, micro-batches summed twice).
//
// The members' values live with their ranks, those of other lanes in another processor's
// cache: each loop over them asks for the values, then their sets, a few members ahead,
// which halves a wide all-reduce's completion on two threads (docs/performance.md).
void combine(CollectiveInputs &c, const IntSet &members, int64_t ranks, const Failure &report) {
  size_t n = c.inputs.size();
  bool poisoned = c.mismatched;
  bool forged = false;
  for (size_t i = 0; i < n; ++i) {
    if (i + 2 * kAhead < n)
      __builtin_prefetch(c.inputs[i + 2 * kAhead].get());
    if (i + kAhead < n) {
      __builtin_prefetch(c.inputs[i + kAhead]->batches.get());
      __builtin_prefetch(c.inputs[i + kAhead]->shards.get());
    }
    poisoned |= c.inputs[i]->poisoned;
    forged |= c.inputs[i]->forged;
  }
  const Value &first = *c.inputs[0];
  // Reports `message()`, out of line: the words are put together only for a failure.
  Failure fail = [&](const char *code, const Words &message) {
    report(code, message);
    poisoned = true;
  };
  for (size_t i = 1; i < n && !poisoned; ++i)
    if (c.inputs[i]->kind != first.kind)
      fail("collective-kinds", [&] {
        return std::string(collectiveName(c.kind)) + " over " + groupName(members, ranks) + " combines " +
               kindPlural(first.kind) + " (rank " + std::to_string(members.elements()[0]) + ") with " +
               kindPlural(c.inputs[i]->kind) + " (rank " + std::to_string(members.elements()[i]) + ")";
      });
  if (c.kind == CollectiveKind::AllToAll) {
    c.result = exchangeTokens(c, members, ranks, poisoned, fail);
    c.result.forged = forged;
    return;
  }
  if (first.kind == Kind::Activation || first.kind == Kind::ActGrad) {
    c.result = unitePieces(c, members, poisoned, fail);
    if (scatters(c.kind) && !c.result.poisoned && c.result.split != Split::None) {
      fail("collective-partials", [&] {
        return ofLayer(c) + " splits a sum of tensor-parallel parts " + c.result.shards->str() + " of " +
               std::to_string(c.result.total) + " only; every part must be in it";
      });
      c.result.poisoned = true;
    }
    c.result.forged = forged;
    return;
  }
  // Check each member's value against the first, then unite all shards (allgather) or
  // micro-batches (the reductions); an element seen twice is an overlap.
  std::vector<int64_t> all;
  std::vector<size_t> starts; // where each member's elements begin in `all` (for messages)
  collectElements(c, members, poisoned, fail, all, starts);
  IntSet united;
  if (!poisoned)
    united = uniteElements(c, members, std::move(all), starts, fail);
  c.result = flatResult(c, first, std::move(united));
  c.result.forged = forged;
  c.result.poisoned = poisoned;
}

Value CollectiveInputs::resultFor(size_t position, const Value &of, const Value &input) const {
  Value mine = of;
  if (kind == CollectiveKind::AllToAll) {
    if (atExperts(mine.split)) { // dispatched: its own micro-batches come back here
      mine.shards = input.batches;
      mine.step = static_cast<int64_t>(position);
    } else { // brought back: the micro-batches it sent out
      mine.batches = input.shards;
    }
    return mine;
  }
  if (scatters(kind)) { // each member keeps its own shard of the sum
    int64_t n = static_cast<int64_t>(kinds.size()), pos = static_cast<int64_t>(position);
    if (mine.kind == Kind::Activation || mine.kind == Kind::ActGrad) { // split along the sequence
      mine.shards = singleSet(pos);
      mine.total = n;
      mine.split = Split::Sequence;
    } else { // of the gradient's one slice (the whole, or a tensor-parallel part): slice p·n + pos of t·n
      auto [slice, slices] = singleSlice(*mine.shards, mine.total);
      if (slice < 0) // a poisoned input
        slice = 0, slices = 1;
      mine.shards = singleSet(slice * n + pos);
      mine.total = slices * n;
    }
  }
  return mine;
}

// Every member must have called the same collective on the same layer as the group's
// lowest rank; the first that did not is reported, naming both places.
void matchCalls(CollectiveInputs &c, const IntSet &members, int64_t ranks, const ReportError &report) {
  const auto &ids = members.elements();
  c.kind = c.kinds[0];
  c.layer = c.inputs[0]->layer;
  for (size_t i = 1; i < ids.size(); ++i) {
    bool otherCall = c.kinds[i] != c.kind;
    if (!otherCall && (c.inputs[i]->poisoned || c.inputs[0]->poisoned || c.inputs[i]->layer == c.layer)) {
      if (c.coalesced[i] != c.coalesced[0] && !c.inputs[i]->poisoned && !c.inputs[0]->poisoned) {
        reportCoalescing(c, members, ranks, report, i);
        c.mismatched = true;
        return;
      }
      continue; // matches (the words of a mismatch are put together only for one)
    }
    reportMismatch(c, members, ranks, report, i);
    c.mismatched = true;
    return;
  }
}

} // namespace schedc::sim
