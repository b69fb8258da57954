// Collective — what a collective call is made of and the checks of its inputs, as functions of
// the inputs and the group: every member called the same collective on the same layer
// (matchCalls), and their values combine — shards each once, micro-batches summed once,
// tensor-parallel pieces whole (combine). The rendezvous that gathers the members' inputs and
// wakes them is the engine's (engine/Communication.cpp); these functions take no lock and
// touch nothing but their arguments.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "ops/Operations.h"
#include "sim/IntSet.h"
#include "sim/Value.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace schedc::sim {

// One call of a collective over a group: each member's call, by position in the group, and
// what the call makes of them once complete.
struct CollectiveInputs {
  CollectiveInputs(CollectiveKind k, size_t members)
      : kind(k), kinds(members), inputs(members), at(members), coalesced(members) {}
  // What the member at `position` gets of `of` (`result`, or its lane's copy): the result, or
  // a reduce-scatter's shard of it.
  // `input` is the member's own (an all-to-all's result depends on it).
  Value resultFor(size_t position, const Value &of, const Value &input) const;

  CollectiveKind kind; // of the lowest member (what the others must match)
  int64_t layer = -1;
  std::vector<CollectiveKind> kinds; // by position in the group
  std::vector<ValuePtr> inputs;      // by position in the group
  std::vector<SourceRange> at;       // call sites, by position
  std::vector<uint8_t> coalesced;    // by position: 1 where the member's call continues its previous
                                     // collective's (both in one `group`), which every member must do alike
  bool mismatched = false;
  Value result; // once complete; each member makes its own value of it (made by its event)
};

// What a collective does with its members' values, one exhaustive switch each (a new
// collective fails to compile until it says): gathers their shards (else reduces a sum), and
// leaves each member a shard of the result (else all of it).
bool gathers(CollectiveKind k);
bool scatters(CollectiveKind k);
// Whether the collective takes a member's value `v` at all (else the member's call is an
// error), and what it takes, for that error: "a weight gradient or ...".
bool takes(CollectiveKind k, const Value &v);
const char *whatItTakes(CollectiveKind k);

// How the checks report a problem: a code and the words, put together only when called.
using Words = std::function<std::string()>;
using Failure = std::function<void(const char *, const Words &)>;
// An error at a place, with notes (Rank::error).
using ReportError = std::function<void(SourceRange, const char *, std::string, std::vector<Diagnostic>)>;

// Every member must have called the same collective on the same layer as the group's lowest
// rank; the first that did not is reported, naming both places (`c.mismatched`).
void matchCalls(CollectiveInputs &c, const IntSet &members, int64_t ranks, const ReportError &report);
// Computes `c.result` from the members' inputs, reporting the problems only the whole group
// shows (different shards, micro-batches summed twice); `ranks` is the run's (for "all ranks").
void combine(CollectiveInputs &c, const IntSet &members, int64_t ranks, const Failure &report);

// What an all-to-all makes of an activation (gradient) of this kind and split: a router's
// output dispatched, the experts' output combined whole (an activation); a layer output's
// gradient dispatched to the experts, their input's gradient combined at the router (a
// gradient). Nothing for a value an all-to-all does not take.
std::optional<Split> exchangedSplit(Kind kind, Split split);

// "all ranks", or "ranks 0..3": how messages name a group of a run of `ranks` ranks.
std::string groupName(const IntSet &members, int64_t ranks);

} // namespace schedc::sim
