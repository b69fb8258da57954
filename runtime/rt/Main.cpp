// Main — schedc_main, the `main` of every compiled schedule, and runProgram, which `schedc
// run` calls directly. Rebuilds the sources and locations from the program description,
// reads -D and the run options, evaluates the parameters with the compiled defaults, and
// runs every rank of the compiled entry through sim::runAndReport — the same path `schedc
// check` takes — so the report and diagnostics are byte for byte the same.
#include "rt/Program.h"
#include "rt/RankContext.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace schedc::rt {

namespace {

const char *kUsage = R"(usage: %s [options]

A schedule compiled by schedc. Runs one training step of it and prints the report.

  --backend=sim        run on the simulated backend (the puzzle cost model; the default)
  -D NAME=VALUE        override a schedule parameter (repeatable)
  --format=text|json   the report's format (default text)
  --events=FILE        write every event as CSV
  --max-steps=N        give up after N executed statements (default 50000000)
  --help               this text

Exit codes: 0 correct, 1 not a correct training step, 2 bad command line or parameters,
4 a file could not be written, 70 internal error.
)";

} // namespace

int runProgram(const schedc_program &program, const std::vector<std::string> &defines, const sim::RunOptions &options,
               std::ostream &out, std::ostream &err) {
  if (program.abi_version != SCHEDC_ABI_VERSION) {
    err << "schedc: error: this program was compiled for runtime ABI " << program.abi_version
        << ", but the runtime is ABI " << SCHEDC_ABI_VERSION << "; rebuild it\n";
    return kExitInternal;
  }
  SourceManager sources;
  for (uint32_t i = 0; i < program.num_files; ++i)
    sources.addBuffer(program.files[i].path, program.files[i].text);
  std::vector<SourceRange> locations;
  for (uint32_t i = 0; i < program.num_locations; ++i) {
    const schedc_location &l = program.locations[i];
    locations.push_back(SourceRange{{l.file + 1, l.line, l.col}, {l.file + 1, l.end_line, l.end_col}});
  }
  std::vector<std::string> axes(program.axes, program.axes + program.num_axes);

  sim::RunSetup setup;
  setup.schedule = program.schedule;
  setup.scheduleAt = SourceRange(locations[program.schedule_loc].begin);
  setup.file = sources.name(setup.scheduleAt.begin.file);
  for (uint32_t i = 0; i < program.num_params; ++i)
    setup.params.push_back(
        sim::ParamSpec{program.params[i].name, program.params[i].has_default != 0, locations[program.params[i].loc]});
  for (uint32_t i = 0; i < program.num_arrays; ++i) {
    int32_t k = program.arrays[i].kind;
    setup.arrays.push_back(
        sim::ArrayInfo{program.arrays[i].name, k < 0 ? std::nullopt : std::optional(static_cast<sim::Kind>(k))});
  }
  if (program.target_steps >= 0)
    setup.targetSteps = program.target_steps;
  if (program.target_memory >= 0)
    setup.targetMemory = program.target_memory;

  DiagnosticEngine diags(sources, options.json ? nullptr : &err);
  std::optional<std::map<std::string, int64_t>> overrides = sim::resolveDefines(setup, defines, diags);
  if (!overrides) {
    if (options.json)
      out << sim::invalidJson(setup.schedule, setup.file, diags, sources);
    return kExitUsage;
  }

  // The parameters: -D values where given, the compiled defaults for the rest.
  std::vector<int64_t> values(program.num_params, 0);
  std::vector<uint8_t> overridden(program.num_params, 0);
  for (uint32_t i = 0; i < program.num_params; ++i)
    if (auto it = overrides->find(program.params[i].name); it != overrides->end()) {
      values[i] = it->second;
      overridden[i] = 1;
    }
  RankContext paramContext(locations, axes);
  paramContext.paramDiags = &diags;
  program.parameters(reinterpret_cast<schedc_rank *>(&paramContext), values.data(), overridden.data());
  std::optional<std::vector<int64_t>> evaluated;
  if (!paramContext.paramsFailed)
    evaluated = values;

  return sim::runAndReport(
      setup, evaluated, options,
      [&](sim::Rank &rank) {
        RankContext context(locations, axes);
        context.rank = &rank;
        program.entry(reinterpret_cast<schedc_rank *>(&context), values.data());
      },
      sources, diags, out);
}

} // namespace schedc::rt

extern "C" int schedc_main(const schedc_program *program, int argc, char **argv) {
  namespace rt = schedc::rt;
  std::vector<std::string> defines;
  schedc::sim::RunOptions options;
  auto usage = [&](const std::string &message) {
    std::cerr << "schedc: error: " << message << " (see " << argv[0] << " --help)\n";
    return schedc::kExitUsage;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> std::optional<std::string> {
      std::string f = flag;
      if (a.compare(0, f.size() + 1, f + "=") == 0)
        return a.substr(f.size() + 1);
      if (a == f && i + 1 < argc)
        return std::string(argv[++i]);
      return std::nullopt;
    };
    if (a == "--help" || a == "-h") {
      std::printf(rt::kUsage, argv[0]);
      return schedc::kExitOk;
    } else if (a.size() > 2 && a.compare(0, 2, "-D") == 0) {
      defines.push_back(a.substr(2));
    } else if (a == "-D" && i + 1 < argc) {
      defines.push_back(argv[++i]);
    } else if (auto v = value("--backend")) {
      if (*v != "sim")
        return usage("backend `" + *v + "` is not available in this build (available: sim)");
    } else if (auto v = value("--format")) {
      if (*v != "text" && *v != "json")
        return usage("unknown --format `" + *v + "` (expected text or json)");
      options.json = *v == "json";
    } else if (auto v = value("--events")) {
      options.eventsFile = *v;
    } else if (auto v = value("--max-steps")) {
      char *end = nullptr;
      options.maxSteps = std::strtoull(v->c_str(), &end, 10);
      if (v->empty() || *end || options.maxSteps == 0)
        return usage("--max-steps needs a positive number");
    } else {
      return usage("unknown option `" + a + "`");
    }
  }
  try {
    return rt::runProgram(*program, defines, options, std::cout, std::cerr);
  } catch (const std::exception &e) {
    std::cerr << "schedc: internal error: " << e.what() << "\n";
    return schedc::kExitInternal;
  }
}
