// Options implementation: a small hand-written parser (subcommand first, then flags and one
// positional file; `-D x=1` and `-Dx=1`, `--opt=value` and `--opt value` both accepted).
#include "driver/Options.h"

#include "options/OptionValues.h"

#include <cstdlib>

namespace schedc::driver {

std::string helpText() {
  return R"(schedc - a compiler for distributed-training schedules

USAGE
  schedc <command> FILE [options]

COMMANDS
  check FILE    Verify the schedule (every update sees all batches and shards, collectives
                match, nothing hangs) and report its step time and peak memory per rank
  draw FILE     Draw the schedule's timeline (one row per rank, memory beneath) to -o FILE
  build FILE    Compile the schedule to a native executable (LLVM) that runs it on the sim
                backend and prints the same report as check (pass -D to the executable)
  run FILE      Compile the schedule and run it in-process (LLVM ORC JIT)
  compare FILE...  Check several schedules with the same -D parameters and print a table:
                step time, bubble fraction, peak memory, communication volume
  help          Show this text (also --help); `schedc --version` prints the version

OPTIONS
  -D NAME=VALUE        Override a schedule parameter, e.g. -D layers=8 (repeatable)
  -I DIR               Search DIR for imported files (repeatable); stdlib/ is searched last
  --schedule=NAME      The schedule to use when the file defines several
  --emit=ast|ir        Stop after the front end and print the syntax tree or the typed IR
  --format=text|json   Output format of reports and diagnostics (default text);
                       draw: svg (default) or html (a page with details on hover)
  --trace=FILE         check, draw, run: write a Chrome trace (open it in Perfetto)
  --cost-model=NAME    puzzle (default: the puzzles' exact model) or compute-only
                       (communication takes no time)
  -o FILE              Output file (draw, build; default: the input's name, .o, .ll)
  -O0 .. -O3           Optimization level of build and run (default -O2)
  --emit-llvm          build: write textual LLVM IR instead of an executable
  -c                   build: write an object file instead of an executable
  --cuda               build: link the cuda backend in (run it with --backend=cuda;
                       only where schedc was built with CUDA and NCCL)
  --error-limit=N      Stop after N errors (default 20, 0 means no limit)
  --events=FILE        check, run: write every event (rank, kind, layer, batches,
                       start, length, memory) as CSV, in the format of the reference traces

LIMITS (check, draw, run, compare; compiled programs take the same options): a run that
reaches one stops with an error naming it, and exit code 6
)" + std::string(sim::kLimitsHelp) +
         R"(
MEMORY IN BYTES (check, draw, run, compare: predict each rank's peak bytes of a real
model beside the puzzle's units; compiled programs take the same options)
)" + std::string(sim::kByteModelHelp) +
         R"(
EXIT CODES
  0 success, 1 the schedule is not a correct training step, 2 bad command line,
  3 syntax or semantic errors, 4 a file could not be read or written, 6 a resource
  limit stopped the run, 70 internal error

See docs/language.md for the language and docs/diagnostics.md for the diagnostics.
)";
}

namespace {

std::optional<Command> commandNamed(const std::string &s) {
  if (s == "check")
    return Command::Check;
  if (s == "draw")
    return Command::Draw;
  if (s == "build")
    return Command::Build;
  if (s == "run")
    return Command::Run;
  if (s == "compare")
    return Command::Compare;
  if (s == "help" || s == "--help" || s == "-h")
    return Command::Help;
  if (s == "--version")
    return Command::Version;
  return std::nullopt;
}

} // namespace

std::optional<Options> parseOptions(const std::vector<std::string> &args, std::string &error) {
  Options o;
  if (args.empty())
    return o; // help
  std::optional<Command> cmd = commandNamed(args[0]);
  if (!cmd) {
    error = "unknown command `" + args[0] + "` (expected check, draw, build, run, compare or help)";
    return std::nullopt;
  }
  o.command = *cmd;
  if (o.command == Command::Help || o.command == Command::Version)
    return o;

  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    // Splits "--name=value" or takes the next argument as the value.
    auto value = [&](const std::string &flag, std::string &out) -> bool {
      if (a.size() > flag.size() && a.compare(0, flag.size(), flag) == 0) {
        size_t skip = a[flag.size()] == '=' ? 1 : 0;
        if (flag.size() == 2 || skip) { // -Dx=1 / --flag=value
          out = a.substr(flag.size() + skip);
          return true;
        }
        return false;
      }
      if (a != flag)
        return false;
      if (i + 1 >= args.size()) {
        error = "option `" + flag + "` needs a value";
        out.clear();
        return true;
      }
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      o.command = Command::Help;
      return o;
    } else if (value("-D", v)) {
      o.defines.push_back(v);
    } else if (value("-I", v)) {
      o.includes.push_back(v);
    } else if (value("-o", v)) {
      o.output = v;
    } else if (value("--schedule", v)) {
      o.schedule = v;
    } else if (value("--cost-model", v)) {
      if (const cost::CostModel *model = cost::findCostModel(v))
        o.costModel = model;
      else if (error.empty())
        error = "unknown cost model `" + v + "` (available: " + cost::costModelNames() + ")";
    } else if (value("--emit", v)) {
      if (v == "ast")
        o.emit = Emit::Ast;
      else if (v == "ir")
        o.emit = Emit::Ir;
      else if (error.empty())
        error = "unknown --emit kind `" + v + "` (expected ast or ir)";
    } else if (value("--format", v)) {
      if (v == "text")
        o.format = Format::Text;
      else if (v == "json")
        o.format = Format::Json;
      else if (v == "svg" && o.command == Command::Draw)
        o.format = Format::Svg;
      else if (v == "html" && o.command == Command::Draw)
        o.format = Format::Html;
      else if (error.empty())
        error = o.command == Command::Draw ? "unknown --format `" + v + "` for draw (expected svg or html)"
                                           : "unknown --format `" + v + "` (expected text or json)";
    } else if (value("--trace", v)) {
      o.traceFile = v;
    } else if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
      o.optLevel = static_cast<unsigned>(a[2] - '0');
    } else if (a == "--emit-llvm") {
      o.emitLLVM = true;
    } else if (a == "-c") {
      o.objectOnly = true;
    } else if (a == "--cuda") {
      o.cuda = true;
    } else if (std::string flag = sim::byteModelFlag(a); !flag.empty() && value(flag, v)) {
      if (error.empty())
        sim::parseByteModelOption(flag, v, o.bytes, error);
      if (error.empty() && o.command == Command::Build)
        error = flag + " is an option of the compiled program, not of build (pass it when it runs)";
    } else if (value("--events", v)) {
      o.eventsFile = v;
    } else if (std::string flag = sim::limitFlag(a); !flag.empty() && value(flag, v)) {
      if (error.empty())
        sim::parseLimitOption(flag, v, o.limits, error);
      if (error.empty() && o.command == Command::Build)
        error = flag + " is an option of the compiled program, not of build (pass it when it runs)";
    } else if (value("--error-limit", v)) {
      uint64_t n = 0;
      if (!parseWholeNumber(v, 0, 100000, n))
        error = "--error-limit needs a number from 0 to 100000";
      o.errorLimit = static_cast<unsigned>(n);
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      error = "unknown option `" + a + "`";
    } else if (o.input.empty() || o.command == Command::Compare) {
      if (o.input.empty())
        o.input = a;
      o.inputs.push_back(a);
    } else {
      error = "more than one input file (`" + o.input + "` and `" + a + "`)";
    }
    if (!error.empty())
      return std::nullopt;
  }
  if (o.input.empty()) {
    error = "no input file (usage: schedc <command> FILE [options]; see schedc --help)";
    return std::nullopt;
  }
  if (o.command == Command::Compare) {
    // The table is the output: options that write other outputs belong to check and draw.
    const char *other = !o.output.empty()            ? "-o"
                        : !o.eventsFile.empty()      ? "--events"
                        : !o.traceFile.empty()       ? "--trace"
                        : o.emit != Emit::None       ? "--emit"
                        : o.format != Format::Text   ? "--format"
                        : o.emitLLVM || o.objectOnly ? "--emit-llvm or -c"
                        : o.cuda                     ? "--cuda"
                                                     : nullptr;
    if (other) {
      error = std::string("compare prints a table; ") + other + " is not available (use check for one schedule)";
      return std::nullopt;
    }
  }
  return o;
}

} // namespace schedc::driver
