// Search — branch and bound over a plan's configurations (docs/plan.md). Configurations
// whose bytes bound is over the accelerator's usable memory cannot fit and are dropped;
// the rest are checked in order of their step bound, on `threads` threads, each check the
// real one (verified, timed, its peak bytes per rank). Once the top K (fitting, correct)
// steps are known, a configuration whose step bound is not below the K-th is dropped, and
// with it every one after it. Exhaustive: every configuration is checked (the test of the
// pruning). Invariants: every configuration faster than the K-th best ranked one was checked
// (so the ranking, the winner and the Pareto front up to the K-th step are exact); the
// ranking depends on the figures alone, not on which thread finished first.
#pragma once

#include "plan/Space.h"
#include "report/ReportFormat.h"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace schedc::plan {

// What checking one configuration found.
struct Outcome {
  sim::Verdict verdict = sim::Verdict::Invalid;
  std::string problem; // the first error, where the run was not Correct
  double seconds = 0, mfu = 0, tokensPerSecond = 0;
  double peakBytes = 0; // the fullest rank's
  int64_t peakRank = 0;
  bool fits = false;
  std::string order; // a searched configuration's: the order checked, as PyTorch's file
  std::string note;  // what the table says of it beside its configuration ("1F1B's order")
};

struct Checked {
  Candidate candidate;
  Outcome outcome;
  bool ranked() const { return outcome.verdict == sim::Verdict::Correct && outcome.fits; }
};

struct SearchCounts {
  size_t enumerated = 0;
  size_t sameRun = 0;    // dropped: the same run as one with less recomputation (plan/Bounds.h's
                         // fingerprint; kept by --exhaustive, whose test this is too)
  size_t overMemory = 0; // dropped: the bytes bound is over the usable memory
  size_t slower = 0;     // dropped: the step bound is not below the K-th best step
  size_t checked = 0;
  size_t notCorrect = 0;      // checked, and not a Correct step (refused parameters included)
  size_t stopped = 0;         // of those, stopped at a resource limit (not judged)
  size_t cannotSplit = 0;     // dropped: the model cannot be split so (its heads by t, say)
  size_t overCapacity = 0;    // checked, Correct, and over the usable memory
  size_t boundViolations = 0; // a checked figure below its bound: a bug in plan/Bounds.cpp
};

struct SearchResult {
  std::vector<Checked> ranked;   // fitting and correct, fastest first (ties: fewer bytes, then the enumeration's order)
  std::vector<Checked> unranked; // checked, and not ranked
  SearchCounts counts;
  double wallSeconds = 0;
  // The configuration with the least bytes bound, and that bound: what the least of them
  // needs at least (where none fits, the figure to compare with the memory).
  Candidate leastBytes;
  std::string stoppedProblem; // the first stopped check's error
  std::string cannotSplitWhy; // why the model cannot be split so, for one of them (set by the caller)
};

using CheckFn = std::function<Outcome(const Candidate &)>;
// Called after each check with the checks done, the configurations left to check at most,
// and the best step so far (0: none yet).
using ProgressFn = std::function<void(size_t done, size_t left, double best)>;

struct SearchOptions {
  double usableBytes = 0; // an accelerator's memory less the runtime's share (or the cap)
  size_t top = 5;
  unsigned threads = 1;
  bool exhaustive = false;
};

// `candidates` with their bounds set.
SearchResult search(std::vector<Candidate> candidates, const SearchOptions &options, const CheckFn &check,
                    const ProgressFn &progress);

} // namespace schedc::plan
