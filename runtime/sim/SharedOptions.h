// SharedOptions — the options that `schedc check/draw/run/compare` and compiled programs both
// take, read by one function so that both accept and refuse them alike: the byte model's
// (--hidden, --tokens, --optimizer, --precision; Bytes.h), the limits' (--max-steps,
// --time-limit, --memory-limit; Budget.h), --no-warn, --overlap and --threads.
#pragma once

#include "options/ArgumentList.h"
#include "sim/Budget.h"
#include "sim/Bytes.h"
#include "sim/PointToPoint.h"

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

// --threads: the threads a run's ranks run on (Options::threads); kAutoThreads lets the
// run choose from the processors the process may use and the ranks it has.
constexpr unsigned kAutoThreads = 0;
constexpr unsigned kMaxThreads = 256;

// The default of --threads: the environment's SCHEDC_THREADS (the same values), or auto.
// Returns what is wrong with SCHEDC_THREADS ("" if nothing).
std::string defaultThreads(unsigned &threads);

// If the current argument is one of those options, reads its value into `bytes`, `limits`,
// `silenced`, `overlapHidden` (--overlap: Options::overlapHidden), `threads` or `p2p` (--p2p:
// RunOptions::p2p) (a bad or missing value: `error`, unless already set) and returns the
// flag; else "".
std::string readSharedOption(ArgumentList &args, ByteModel &bytes, Limits &limits, SilencedWarnings &silenced,
                             double &overlapHidden, unsigned &threads, std::optional<PointToPoint> &p2p,
                             std::string &error);

} // namespace schedc::sim
