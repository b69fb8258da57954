// ImportReading implementation.
#include "interop/ImportReading.h"

#include "interop/FsdpLowering.h"

#include <fmt/format.h>

namespace schedc::interop {

bool lowerFsdp(ActionTable &table, const ImportOptions &opts, Shape &shape, DiagnosticEngine &diags) {
  // Plain stages: PyTorch's runtime skips UNSHARD and RESHARD where the stage is not an
  // FSDPModule, and REDUCE_GRAD only scales a plain or DDP module's gradients.
  if (!opts.fsdp && !opts.replicas && !opts.replicate)
    return true;
  if (opts.replicate) { // UNSHARD and RESHARD do nothing; REDUCE_GRAD all-reduces
    shape.replicated = true;
  } else if (!shape.fsdpActions) {
    if (const Cell *cell = firstCellWith(table, [](const Action &a) { return isTransfer(a.type); })) {
      diags.error(cell->range,
                  fmt::format("`{}`: {} reads the stages as FSDP modules, but this file has its sends and receives "
                              "and no UNSHARD: PyTorch's runtime adds UNSHARD and RESHARD only to a compute-only "
                              "file (write them in the file, or read the stages as plain modules without {})",
                              spell(*cell), opts.fsdp ? "--fsdp" : "-D dp", opts.fsdp ? "--fsdp" : "-D dp"));
      return false;
    }
    addUnshardReshard(table);
  }
  shape.fsdp = !opts.replicate;
  if (!firstCellWith(table, [](const Action &a) { return a.type == ActionType::ReduceGrad; }))
    addReduceGrad(table, shape.microBatches, [&shape](const Action &a) { return shape.makesWeightGradient(a); });
  return true;
}

void reportStuck(const std::vector<const Cell *> &stuck, const Shape &sh, DiagnosticEngine &diags) {
  auto waitsFor = [&](const Cell &cell) {
    std::string what;
    for (const Action &a : cell.actions) {
      if (a.type == ActionType::Forward && a.stage > 0)
        what += fmt::format("{}stage {}'s forward of micro-batch {} (`{}F{}`, rank {})", what.empty() ? "" : " and ",
                            a.stage - 1, a.microBatch, a.stage - 1, a.microBatch, sh.owner[size_t(a.stage - 1)]);
      else if (makesInputGradient(a.type) && a.stage + 1 < sh.stages)
        what += fmt::format("{}the gradient from stage {}'s backward of micro-batch {} (rank {})",
                            what.empty() ? "" : " and ", a.stage + 1, a.microBatch, sh.owner[size_t(a.stage + 1)]);
    }
    return fmt::format("`{}` waits for {}", spell(cell), what);
  };
  const Cell *first = nullptr;
  std::vector<const Cell *> others;
  for (const Cell *cell : stuck)
    if (cell)
      (first ? others.push_back(cell) : void(first = cell));
  auto diag = diags.error(first->range, waitsFor(*first) + ", which no row computes before it: PyTorch's runtime "
                                                           "cannot add the sends and receives to this compute-only "
                                                           "file (_add_send_recv: \"Malformed compute schedule\")");
  for (const Cell *cell : others)
    diag.note(cell->range, waitsFor(*cell));
}

std::string readingOf(const Shape &sh, const ImportOptions &opts) {
  if (sh.replicated)
    return "replicated stages (--replicate): the file is one of `dp` replicas, each with the stages' whole "
           "weights; REDUCE_GRAD all-reduces a stage's gradient over them, UNSHARD and RESHARD do nothing";
  if (sh.fsdp)
    return fmt::format("FSDP stages ({}): the file is one of `dp` replicas; UNSHARD all-gathers a stage's "
                       "parameters over them, REDUCE_GRAD reduce-scatters its gradient{}",
                       opts.fsdp ? "--fsdp" : "-D dp",
                       sh.fsdpActions ? "" : "; UNSHARD and RESHARD added as PyTorch's runtime adds them");
  return std::string("plain stages (not FSDP)") +
         (sh.fsdpActions ? ": UNSHARD and RESHARD do nothing, as in PyTorch's runtime for a stage that is not an "
                           "FSDPModule; --fsdp or -D dp=N reads them as FSDP"
                         : "");
}

} // namespace schedc::interop
