// Trace — a run as a Chrome trace (JSON, for Perfetto or chrome://tracing): one process per
// rank with two tracks, compute (forward, backward, loss, update) and communication
// (collectives, send, receive); a flow arrow from every send to the receive of its message;
// a memory counter per rank; each event's layer, micro-batches, memory and source location
// as arguments. One puzzle time unit is one millisecond (ts and dur are in microseconds).
#pragma once

#include "diagnostics/SourceManager.h"
#include "engine/World.h"

#include <ostream>
#include <string>

namespace schedc::sim {

// What a real run measured for one event: its start and length in seconds from the start of
// the run, and the bytes of data held at its start.
struct Measured {
  double start = 0, length = 0;
  int64_t memory = 0; // bytes
};
// Per rank, per event (the runs of the cpu and cuda backends).
using MeasuredRun = std::vector<std::vector<Measured>>;

// Writes the trace on `out` as it goes (a trace of 1024 ranks' events is tens of MB). With
// `measured`, times and memory are the measured ones (ts and dur still in microseconds, now
// of real time).
void writeChromeTrace(std::ostream &out, const World &world, const SourceManager &sources, const std::string &schedule,
                      const MeasuredRun *measured = nullptr);

// Every event's name, by rank: its kind, except that a `pass` is "send" or "recv" (the send
// of a message starts before its receive).
std::vector<std::vector<const char *>> eventNames(const World &world);

// The PyTorch action an event comes from (`7F4`, `(0F7;7B3)OVERLAP_F_B`) where the schedule
// was imported from a PyTorch CSV file (the importer places each event at its action's
// cell), else "": the trace's `pytorch_action` and the timeline's hover show it.
std::string pytorchAction(const SourceRange &at, const SourceManager &sources);

} // namespace schedc::sim
