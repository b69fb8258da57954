// ImportSchedule — a PyTorch pipeline schedule (an ActionTable) as a .sched schedule that
// does what the file says, cell by cell: each cell becomes one line of the schedule, so that
// whatever the checker finds there is reported at the cell (SourceManager::addDerived). For
// the commands that run it, the rank blocks are tables instead, a row a cell, each running
// the code of the cell's line (ImportTables.h); `schedc import` writes the lines.
//
// The model: S stages (the file's stage numbers), each `layers / S` consecutive layers
// (by default one), M micro-batches, R ranks (one per row). A stage belongs to the rank
// whose row computes it (looped, V-shaped or any other placement). A compute-only file gets
// its sends and receives as PyTorch's runtime adds them (CommsLowering.h); a file with
// SEND_/RECV_ actions gets exactly those, each receive posted where its RECV cell is. B is
// the input half where the file also has a W of the same stage and micro-batch (older
// files), else the whole backward, as are BW. Every rank loads its stages' weights first and
// updates them last. The schedule is `@p2p(ordered)`: a receive takes what its peer sent
// first, as PyTorch's over NCCL do (sim/PointToPoint.h); each message's tag says what it is.
//
// The stages are plain modules by default: UNSHARD and RESHARD do nothing and REDUCE_GRAD only
// scales gradients, as in PyTorch's runtime for a stage that is not FSDP. FSDP (--fsdp or
// -D dp; a compute-only file gets UNSHARD and RESHARD as PyTorch lowers one): the file is one
// of `dp` data-parallel replicas (a parameter, 2 by default; mesh (replica = dp, pp = R)),
// replica d taking micro-batches dM to dM + M - 1; a rank loads a 1/dp shard of its stages'
// weights, UNSHARD all-gathers a stage's layers over the replicas, RESHARD frees them,
// REDUCE_GRAD reduce-scatters its gradient, and the update is of the shard. Replicated
// stages (--replicate, PyTorch's composable `replicate`): the same replicas, each with the
// stages' whole weights; REDUCE_GRAD all-reduces a stage's gradient (ImportReading.h).
#pragma once

#include "interop/PytorchCsv.h"
#include "sim/TagMeaning.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::interop {

// How to read the file's stages: plain modules (UNSHARD and RESHARD do nothing, as in
// PyTorch's runtime for a stage that is not an FSDPModule), unless one of these says FSDP.
struct ImportOptions {
  bool fsdp = false;      // --fsdp: the stages are FSDP modules
  bool replicas = false;  // -D dp=N was given: the stages are sharded over dp replicas (or, with
                          // `replicate`, whole on each)
  bool replicate = false; // --replicate: the stages are replicated (DDP-style `replicate`)
  bool tables = false;    // the rank blocks as tables to splice into sema's IR (ImportTables.h), not lines
};

class RowTables;

struct ImportedSchedule {
  std::string text;                  // the .sched source
  std::vector<SourceRange> origins;  // origins[i]: the part of the file line i + 1 came from
  sim::TagMeaning tagMeaning;        // what its tags carry
  std::string reading;               // how the stages were read, for the report (sim::RunOptions::reading)
  std::unique_ptr<RowTables> tables; // with ImportOptions::tables: what sema's IR of `text` gets
  ImportedSchedule();
  ImportedSchedule(ImportedSchedule &&) noexcept;
  ImportedSchedule &operator=(ImportedSchedule &&) noexcept;
  ~ImportedSchedule();
};

// `name` is the schedule's name, `from` the file's name for its header comment. Reports what
// the table cannot mean (a stage on two ranks, a send from the last stage, ...) at its cell
// and returns nullopt.
std::optional<ImportedSchedule> importSchedule(ActionTable table, const std::string &name, const std::string &from,
                                               const ImportOptions &opts, DiagnosticEngine &diags);

// Reads the loaded file `csv` as a PyTorch schedule and registers its schedule as text
// derived from it (named `csv`'s name + ".sched"); the new file's id, or nullopt after
// reporting why not.
// With `imported`, also what its tags carry and how its stages were read (its text left empty).
std::optional<uint32_t> addImported(uint32_t csv, const ImportOptions &opts, SourceManager &sources,
                                    DiagnosticEngine &diags, ImportedSchedule *imported = nullptr);

// A schedule name made from a file's name (letters, digits and `_`; `csv_` first where it
// would not start with a letter).
std::string scheduleNameFor(const std::string &path);

} // namespace schedc::interop
