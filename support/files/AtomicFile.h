// AtomicFile — writing a file so that no reader ever sees half of it: through a temporary
// file beside it and a rename. What schedc writes (reports, traces, timelines, exports,
// weights, hardware files) goes through here.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace schedc {

// Writes `text` to `path` through a temporary file and a rename (a reader never sees half);
// a path that is not a regular file (/dev/stdout, a pipe) is written directly. False where
// the file could not be written (no temporary is left behind).
bool writeAtomically(const std::string &path, const std::string &text);
// Likewise, what `write` writes as it goes (a file of any size without its text in memory).
bool writeAtomically(const std::string &path, const std::function<void(std::ostream &)> &write);

} // namespace schedc
