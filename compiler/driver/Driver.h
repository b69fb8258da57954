// Driver — runs one `schedc` invocation: parses the command line, loads the input and its
// imports, runs the front end (parse -> AST -> sema -> typed IR, verified), stops early for
// `--emit=ast|ir`, and dispatches to the subcommand. Returns the process exit code
// (see ExitCode in diagnostics/Diagnostics.h); it never calls exit() itself.
#pragma once

#include <string>
#include <vector>

namespace schedc::driver {

int runDriver(const std::vector<std::string> &args);

} // namespace schedc::driver
