// SharedOptions — the options that `schedc check/draw/run/compare` and compiled programs both
// take, read by one function so that both accept and refuse them alike: the byte model's
// (--hidden, --tokens, --optimizer, --precision; Bytes.h), the limits' (--max-steps,
// --time-limit, --memory-limit; Budget.h), --no-warn and --overlap.
#pragma once

#include "options/ArgumentList.h"
#include "sim/Budget.h"
#include "sim/Bytes.h"

#include <string>

namespace schedc::sim {

// The end-of-step warnings a run is told to leave unsaid (--no-warn=leftover,unreceived), for
// a schedule that holds values or leaves messages on purpose. Errors are never silenced, nor
// is the warning about a forged gradient.
struct SilencedWarnings {
  bool leftover = false;   // activations or gradients still held at the end of the step
  bool unreceived = false; // a message sent and never received
  bool silences(std::string_view code) const {
    return (code == "leftover" && leftover) || (code == "unreceived" && unreceived);
  }
};
extern const char *const kWarningsHelp;

// If the current argument is one of those options, reads its value into `bytes`, `limits`,
// `silenced` or `overlapHidden` (--overlap: Options::overlapHidden) (a bad or missing value:
// `error`, unless already set) and returns the flag; else "".
std::string readSharedOption(ArgumentList &args, ByteModel &bytes, Limits &limits, SilencedWarnings &silenced,
                             double &overlapHidden, std::string &error);

} // namespace schedc::sim
