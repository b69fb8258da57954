// PlanReport — what `schedc plan` prints: the search's counts, the top K (configuration, step,
// MFU, tokens/s per accelerator, the fullest rank's peak GiB, fits), the Pareto front of step
// against peak memory, and the winner's `schedc check` command line, which reproduces its
// figures; or the same as one JSON document (schema schedc-plan/1, docs/plan.md).
#pragma once

#include "plan/Search.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace schedc::driver {

// What the plan was asked, as the report states it and its command lines repeat it.
struct PlanContext {
  std::string model, machine, bytesModel; // names; "bf16, 2 optimizer states"
  int64_t accelerators = 0, globalBatch = 0, sequence = 0, layers = 0;
  bool experts = false;                    // a mixture-of-experts model
  bool expertParallel = false;             // and stdlib moe (expert parallelism) among the searched families
  double memoryBytes = 0, usableBytes = 0; // an accelerator's, and what a configuration may use
  unsigned threads = 1;
  size_t top = 5;
  std::string stdlibDir;
  std::string exportFile;                   // --export: where a searched winner's file is written
  std::string winnerOrder;                  // a searched winner's order (what --export writes)
  std::vector<std::string> sharedArguments; // the user's, as typed
  std::vector<std::string> fixedModelKeys;  // set by the user's --model-set
  plan::Settings modelOwn;                  // the user's model's own settings (its file's, with --model-set)
  std::vector<std::string> addedArguments;  // the plan's own for every check (--model-set=sequence=, the cap)
  std::vector<std::string> leftOut;         // families not searched, each with why (the machine cannot time them)
};

// The name a searched order's file goes by where --export writes none.
constexpr const char *kSearchedFile = "zbsearch.csv";

// A family's stdlib file; the file of `c`: its family's, or where a searched order is written.
std::string familyFile(const PlanContext &context, const plan::Family &family);
std::string scheduleFile(const PlanContext &context, const plan::Candidate &c);
// The `schedc check` command line that checks `c` as the plan did (shell-quoted); with
// `written`, of that file (the plan's -o: the schedule with its parameters fixed, no -D).
std::string checkCommand(const PlanContext &context, const plan::Candidate &c, const std::string &written = "");

void printPlanText(const PlanContext &context, const plan::SearchResult &result, std::ostream &out);
std::string planJson(const PlanContext &context, const plan::SearchResult &result);

} // namespace schedc::driver
