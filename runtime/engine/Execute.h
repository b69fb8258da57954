// Execute — runs one operation of the table (support/ops/Operations.def) on a rank, from its
// arguments in call order: the one dispatch from an OpKind to the sim backend's Rank API,
// shared by the checker's interpreter and by compiled code (through schedc_operation), so
// neither knows an operation's arguments by position.
#pragma once

#include "diagnostics/InternalError.h"
#include "engine/Rank.h"

#include <array>
#include <boost/container/static_vector.hpp>

namespace schedc::sim {

// One argument, as its parameter's kind (ParamKind) asks: an integer, a set, a value or a
// group (its members, in order). Sets are shared, not copied: 32 bytes an operand, and an
// operation's operands on a waiting rank's stack are lines it touches again when it resumes.
struct Operand {
  int64_t integer = 0;
  SetPtr set;
  ValuePtr value;
  SetPtr group;
};

// The arguments of one operation, one per parameter in call order (add() each); read them by
// name. Only the operation's own parameters are constructed and destroyed (an array of
// kMaxParams was 320 bytes set and torn down on every operation).
struct Operands {
  boost::container::static_vector<Operand, kMaxParams> args;
  Operand &add() { return args.emplace_back(); }
  template <class P> int64_t integer(P p) const { return at(p).integer; }
  template <class P> const IntSet &set(P p) const { return *at(p).set; }
  template <class P> const ValuePtr &value(P p) const { return at(p).value; }

private:
  template <class P> const Operand &at(P p) const {
    auto i = static_cast<size_t>(p);
    SCHEDC_ASSERT(i < args.size(), "an operation reads a parameter it was not given");
    return args[i];
  }
};

// What an operation yields: its results in order (`count` of them). A backward or one of its
// halves also keeps both gradients' metadata (the half not computed poisoned), which a real
// backend computes into.
struct Results {
  std::array<ValuePtr, kMaxResults> values;
  size_t count = 0;
  std::pair<ValuePtr, ValuePtr> backward; // weight gradient, activation gradient

  static Results one(ValuePtr v) {
    Results r;
    r.values[0] = std::move(v);
    r.count = 1;
    return r;
  }
};

// A collective's value and its group, wherever its signature puts them.
struct CollectiveArgs {
  ValuePtr value;
  SetPtr group;
};
CollectiveArgs collectiveArgs(OpKind op, const Operands &operands);

// Runs `op` (anything but a storage read) on `rank` at `at`: its checks, its event, its results.
Results execute(Rank &rank, OpKind op, SourceRange at, const Operands &operands);

// The kind of a backward half (or the whole) that `op` is.
Rank::BackwardPart backwardPart(OpKind op);

} // namespace schedc::sim
