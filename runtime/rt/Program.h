// Program — running a compiled schedule (a schedc_program) on the sim backend: the C++
// side of schedc_main, also called directly by `schedc run` (the JIT), so the executable
// and the JIT share one path. It rebuilds the source files and locations from the program
// description, so diagnostics print exactly as `schedc check` prints them.
#pragma once

#include "schedc/runtime.h"
#include "sim/Run.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace schedc::rt {

// Runs `program` with the -D texts in `defines`; prints the report on `out` and (unless
// options.json) diagnostics on `err`. Returns the exit code.
int runProgram(const schedc_program &program, const std::vector<std::string> &defines, const sim::RunOptions &options,
               std::ostream &out, std::ostream &err);

} // namespace schedc::rt
