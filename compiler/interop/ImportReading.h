// ImportReading — how a PyTorch file is read before its cells become code: its stages plain
// modules or FSDP (with PyTorch's lowering of FSDP actions where that applies), the report's
// line that says which, and where PyTorch's lowering of a compute-only file's sends and
// receives stops.
#pragma once

#include "interop/ImportSchedule.h"
#include "interop/ImportShape.h"

#include <string>
#include <vector>

namespace schedc::interop {

// The reading of the file's stages: plain modules, unless --replicate says they are
// replicated (then a file without REDUCE_GRAD gets them, as below) or --fsdp or -D dp says
// they are FSDP
// (then a file without UNSHARDs gets them as PyTorch's runtime lowers a compute-only file, and
// one without REDUCE_GRAD gets those as PyTorch's before it had one reduced a stage's
// gradient with its last weight gradient); sets shape.fsdp. False (reported) where FSDP meets
// a file with its sends and receives but no UNSHARD, which PyTorch's runtime would not lower.
bool lowerFsdp(ActionTable &table, const ImportOptions &opts, Shape &shape, DiagnosticEngine &diags);

// How the stages were read, for the report (sim::RunOptions::reading).
std::string readingOf(const Shape &sh, const ImportOptions &opts);

// Where PyTorch's rounds stop on a compute-only file (CommsLowering.h): one error at the
// first row's stuck cell, a note at each other row's, each saying what its action waits for.
void reportStuck(const std::vector<const Cell *> &stuck, const Shape &sh, DiagnosticEngine &diags);

} // namespace schedc::interop
