// Timeline — the picture of a run, as the puzzles draw it: one row per rank, each event a
// box at its start with its length (forward coloured by layer with its micro-batches
// written in it when they fit, backward the same colour lighter, update yellow, loss red,
// collectives and send/recv in their own colours), each rank's memory as bars beneath its
// row with the largest sample marked, a time axis, a legend, and the Timesteps / Maximum
// Memory line as the caption. Rows shrink with the number of ranks and text is only written
// where it fits, so 128 ranks or 10 000 events stay readable. As SVG, or as a self-contained
// HTML page that shows an event's details on hover. Every event box has class "event" and
// a <title> with its details (operation, layer, micro-batches, start, length, memory, source).
#pragma once

#include "diagnostics/SourceManager.h"
#include "engine/World.h"
#include "report/Trace.h"

#include <ostream>
#include <string>

namespace schedc::sim {

// Writes the picture on `out` as it goes (SVG, or the HTML page when `html`). With
// `measured`, it shows what a real run measured (seconds, bytes held).
void writeTimeline(std::ostream &out, bool html, const World &world, const Report &report, const SourceManager &sources,
                   const std::string &schedule, const MeasuredRun *measured = nullptr);

} // namespace schedc::sim
