// Check — `schedc check`: evaluates the entry schedule's parameters, runs every rank of it
// on the sim backend (a sim::World) through the interpreter, turns what the backend found
// into diagnostics, and prints the report (text or JSON). Returns the exit code.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"

#include <iosfwd>
#include <map>
#include <string>

namespace schedc::check {

struct CheckOptions {
  bool json = false;
  uint64_t maxSteps = 50'000'000;
  std::string eventsFile; // if set: write every event here as CSV
};

int runCheck(const ir::Program &program, const ir::Function &schedule, const std::map<std::string, int64_t> &overrides,
             const CheckOptions &options, const SourceManager &sources, DiagnosticEngine &diags, std::ostream &out);

} // namespace schedc::check
