// SharedOptions — the options that `schedc check/draw/run/compare` and compiled programs both
// take, read by one function so that both accept and refuse them alike: the byte model's
// (--hidden, --tokens, --optimizer, --precision; Bytes.h) and the limits' (--max-steps,
// --time-limit, --memory-limit; Budget.h).
#pragma once

#include "options/ArgumentList.h"
#include "sim/Budget.h"
#include "sim/Bytes.h"

#include <string>

namespace schedc::sim {

// If the current argument is one of those options, reads its value into `bytes` or `limits`
// (a bad or missing value: `error`, unless already set) and returns the flag; else "".
std::string readSharedOption(ArgumentList &args, ByteModel &bytes, Limits &limits, std::string &error);

} // namespace schedc::sim
