// Trace — a run as a Chrome trace (JSON, for Perfetto or chrome://tracing): one process per
// rank with two tracks, compute (forward, backward, loss, update) and communication
// (collectives, send, receive); a flow arrow from every send to the receive of its message;
// a memory counter per rank; each event's layer, micro-batches, memory and source location
// as arguments. One puzzle time unit is one millisecond (ts and dur are in microseconds).
#pragma once

#include "diagnostics/SourceManager.h"
#include "sim/World.h"

#include <string>

namespace schedc::sim {

std::string chromeTrace(const World &world, const SourceManager &sources, const std::string &schedule);

// Every event's name, by rank: its kind, except that a `pass` is "send" or "recv" (the send
// of a message starts before its receive).
std::vector<std::vector<const char *>> eventNames(const World &world);
bool isCommunication(const Event &e);

} // namespace schedc::sim
