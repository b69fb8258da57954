// Compare implementation: one checked run per file, then the table (columns aligned, numbers
// right-aligned, printed as `check` prints them).
#include "driver/Compare.h"

#include "check/Check.h"
#include "driver/CostModels.h"
#include "driver/FrontEnd.h"
#include "driver/TextTable.h"
#include "options/Define.h"
#include "report/ReportFormat.h"
#include "run/CostChoice.h"
#include "run/Run.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>

namespace schedc::driver {

namespace {

using Row = TableRow; // one schedule's cells

// Two layouts. The puzzle's: its time steps, bubble, peak memory in units (and peak MiB
// when the byte model was given) and communication volume in units. The hardware model's
// (a run in seconds and bytes): step seconds, MFU, tokens/s per GPU, the fullest rank's
// peak GiB, that rank, whether every rank fits, the bubble and the bytes communicated in
// GiB — every memory figure from the same rank, no puzzle unit.
std::vector<std::string> headerOf(bool withBytes, bool withHardware) {
  if (withHardware)
    return {"schedule", "file",    "ranks", "verdict", "step s",   "MFU",       "tokens/s/GPU",
            "peak GiB", "on rank", "fits",  "bubble",  "comm GiB", "parameters"};
  std::vector<std::string> header{"schedule", "file", "ranks", "verdict", "step time", "bubble", "peak memory"};
  if (withBytes)
    header.push_back("peak MiB");
  header.insert(header.end(), {"comm volume", "parameters"});
  return header;
}

// The cells of one checked schedule, in the table's layout.
Row rowOf(const sim::CheckResult &r, bool withBytes, bool withHardware) {
  std::string params;
  for (const auto &[name, value] : r.parameters)
    params += (params.empty() ? "" : " ") + name + "=" + std::to_string(value);
  Row row{r.schedule, r.file, std::to_string(r.model.ranks), sim::verdictName(r.verdict)};
  const size_t cells = headerOf(withBytes, withHardware).size() - row.size() - 1;
  if (!r.report || (withHardware && !r.hardware)) {
    row.insert(row.end(), cells, "-");
  } else if (withHardware) {
    const sim::Report &rep = *r.report;
    sim::HardwareFigures h = sim::hardwareFigures(r, rep);
    row.insert(row.end(), {formatted("%.4g", h.seconds), formatted("%.1f%%", 100 * h.mfu),
                           h.tokensPerSecond > 0 ? formatted("%.0f", h.tokensPerSecond) : "-",
                           formatted("%.2f", rep.maxBytes / 1073741824.0), std::to_string(rep.maxBytesRank),
                           h.fits() ? "yes" : "no", formatted("%.4f", rep.bubble),
                           formatted("%.2f", rep.communicationBytes / 1073741824.0)});
  } else {
    const sim::Report &rep = *r.report;
    row.insert(row.end(), {rep.timesteps.str(), formatted("%.4f", rep.bubble), rep.maxMemory.str()});
    if (withBytes)
      row.push_back(formatted("%.1f", rep.maxBytes / (1 << 20)));
    row.push_back(pythonFloatRepr(rep.communicationVolume));
  }
  row.push_back(params);
  return row;
}

void printRows(const std::vector<Row> &rows, bool withBytes, bool withHardware, std::ostream &out) {
  std::vector<Row> table{headerOf(withBytes, withHardware)};
  table.insert(table.end(), rows.begin(), rows.end());
  // Text columns (schedule, file, verdict, fits, parameters) are left-aligned, numbers right-aligned.
  std::set<size_t> left{0, 1, 3, table[0].size() - 1};
  if (withHardware)
    left.insert(9); // fits
  printTable(table, left, out);
}

// The -D texts that name a parameter of `setup` (and any that do not parse, so that
// resolveDefines reports them); records the names used in `used`.
std::vector<std::string> definesFor(const sim::RunSetup &setup, const std::vector<std::string> &defines,
                                    std::set<std::string> &used) {
  std::vector<std::string> mine;
  for (const std::string &d : defines) {
    std::string error;
    auto parsed = parseDefine(d, error);
    bool known = !parsed;
    for (const sim::ParamSpec &p : setup.params)
      known |= parsed && p.name == parsed->first;
    if (known) {
      mine.push_back(d);
      if (parsed)
        used.insert(parsed->first);
    }
  }
  return mine;
}

} // namespace

int runCompare(const Options &opts, SourceManager &sources, DiagnosticEngine &diags) {
  std::vector<LoadedProgram> programs;
  for (const std::string &file : opts.inputs) {
    int exitCode = kExitOk;
    std::optional<LoadedProgram> loaded = loadProgram(file, opts, sources, diags, exitCode);
    if (!loaded)
      return exitCode;
    programs.push_back(std::move(*loaded));
  }

  std::set<std::string> used;
  std::vector<std::map<std::string, int64_t>> overrides;
  for (const LoadedProgram &p : programs) {
    sim::RunSetup setup = check::setupOf(*p.program, *p.schedule, sources);
    auto params = sim::resolveDefines(setup, definesFor(setup, opts.defines, used), diags);
    if (!params || !sim::applyModelLayers(opts, setup, *params, diags))
      return kExitUsage;
    overrides.push_back(*params);
  }
  for (const std::string &d : opts.defines) {
    std::string error;
    if (auto parsed = parseDefine(d, error); parsed && !used.count(parsed->first))
      return usageError("no compared schedule has a parameter `" + parsed->first + "`");
  }

  sim::RunOptions runOptions;
  static_cast<sim::SharedOptions &>(runOptions) = opts; // the options compiled programs share, whole
  std::vector<Row> rows;
  bool allCorrect = true;
  for (size_t i = 0; i < programs.size(); ++i) {
    sim::CheckResult result;
    runOptions.afterRun = [&](const sim::World &, sim::CheckResult &r) {
      result = r;
      return std::string();
    };
    runOptions.tagMeaning = programs[i].tagMeaning;
    runOptions.reading = programs[i].reading;
    std::ostringstream report; // the per-schedule report is summed up in the table
    int code =
        check::runCheck(*programs[i].program, *programs[i].schedule, overrides[i], runOptions, sources, diags, report);
    if (code != kExitOk && code != kExitCheckFailed)
      return code; // parameters out of range or the like: already reported
    allCorrect &= code == kExitOk;
    rows.push_back(rowOf(result, opts.bytes.given, opts.hardwareCost));
  }
  printRows(rows, opts.bytes.given, opts.hardwareCost, std::cout);
  return allCorrect ? kExitOk : kExitCheckFailed;
}

} // namespace schedc::driver
