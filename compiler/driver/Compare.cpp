// Compare implementation: one checked run per file, then the table (columns aligned, numbers
// right-aligned, printed as `check` prints them).
#include "driver/Compare.h"

#include "check/Check.h"
#include "driver/CostModels.h"
#include "driver/FrontEnd.h"
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

using Row = std::vector<std::string>; // one schedule's cells

// The hardware cost model's cells: step seconds, MFU, and whether every rank fits.
Row hardwareCells(const sim::CheckResult &r) {
  if (!r.report)
    return {"-", "-", "-"};
  sim::HardwareFigures h = sim::hardwareFigures(r, *r.report);
  char seconds[32], mfu[32];
  std::snprintf(seconds, sizeof seconds, "%.4g", h.seconds);
  std::snprintf(mfu, sizeof mfu, "%.1f%%", 100 * h.mfu);
  return {seconds, mfu, h.over.empty() ? "yes" : "no"};
}

// The cells of one checked schedule (with a peak-bytes cell when the byte model was given,
// and the hardware cost model's cells when it timed the run).
Row rowOf(const sim::CheckResult &r) {
  std::string params;
  for (const auto &[name, value] : r.parameters)
    params += (params.empty() ? "" : " ") + name + "=" + std::to_string(value);
  Row row{r.schedule, r.file, std::to_string(r.model.ranks), sim::verdictName(r.verdict)};
  if (r.report) {
    char bubble[32];
    std::snprintf(bubble, sizeof bubble, "%.4f", r.report->bubble);
    row.insert(row.end(), {r.report->timesteps.str(), bubble, r.report->maxMemory.str(),
                           pythonFloatRepr(r.report->communicationVolume)});
    if (r.bytes.given) {
      char mib[32];
      std::snprintf(mib, sizeof mib, "%.1f", r.report->maxBytes / (1 << 20));
      row.insert(row.end() - 1, mib);
    }
  } else {
    row.insert(row.end(), {"-", "-", "-", "-"});
    if (r.bytes.given)
      row.push_back("-");
  }
  if (r.hardware) {
    Row cells = hardwareCells(r);
    row.insert(row.begin() + 5, cells.begin(), cells.end());
  }
  row.push_back(params);
  return row;
}

void printTable(const std::vector<Row> &rows, bool withBytes, bool withHardware, std::ostream &out) {
  std::vector<std::string> header{"schedule", "file", "ranks", "verdict", "step time", "bubble", "peak memory"};
  if (withHardware)
    header.insert(header.begin() + 5, {"step s", "MFU", "fits"});
  if (withBytes)
    header.push_back("peak MiB");
  header.insert(header.end(), {"comm volume", "parameters"});
  // Text columns (schedule, file, verdict, parameters) are left-aligned, numbers right-aligned.
  std::set<size_t> left{0, 1, 3, header.size() - 1};
  if (withHardware)
    left.insert(7); // fits
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const Row &r : rows)
      width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string> &cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      text += (c ? "  " : "") + (left.count(c) ? cells[c] + (c + 1 < cells.size() ? pad : "") : pad + cells[c]);
    }
    out << text << "\n";
  };
  line(header);
  for (const Row &r : rows)
    line(r);
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
    rows.push_back(rowOf(result));
  }
  printTable(rows, opts.bytes.given, opts.hardwareCost, std::cout);
  return allCorrect ? kExitOk : kExitCheckFailed;
}

} // namespace schedc::driver
