// Options implementation: a small hand-written parser (subcommand first, then flags and one
// positional file; `-D x=1` and `-Dx=1`, `--opt=value` and `--opt value` both accepted).
#include "driver/Options.h"

#include "files/ScheduleFiles.h"

#include "options/ArgumentList.h"
#include "options/OptionValues.h"
#include "run/SharedOptions.h"

#include <algorithm>
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
  import FILE.csv  Write a PyTorch pipeline schedule (torch.distributed.pipelining's CSV:
                a row of actions per rank) as a .sched schedule, to -o FILE or stdout;
                every other command reads .csv files directly (docs/pytorch.md)
  export FILE   Check the schedule, then write it as a PyTorch pipeline schedule CSV (to
                -o FILE or stdout) for torchtitan; --comms adds the sends and receives
  plan --model=M --hardware=H --gpus=N --global-batch=B
                Search tensor x pipeline x data parallelism, micro-batch size,
                recomputation, sequence parallelism and ZeRO over the stdlib schedules,
                check every configuration the bounds cannot rule out, and print the
                fastest that fit, with the `schedc check` line of each (docs/plan.md)
  help          Show this text (also --help); `schedc --version` prints the version

OPTIONS
  -D NAME=VALUE        Override a schedule parameter, e.g. -D layers=8 (repeatable)
  -I DIR               Search DIR for imported files (repeatable); stdlib/ is searched last
  --schedule=NAME      The schedule to use when the file defines several
  --emit=ast|ir        Stop after the front end and print the syntax tree or the typed IR
  --format=text|json   Output format of reports and diagnostics (default text);
                       draw: svg (default) or html (a page with details on hover)
  --trace=FILE         check, draw, run: write a Chrome trace (open it in Perfetto)
)" + std::string(sim::kCostModelHelp) +
         R"(  -o FILE              Output file (draw, build; default: the input's name, .o, .ll)
  -O0 .. -O3           Optimization level of build and run (default -O2)
  --emit-llvm          build: write textual LLVM IR instead of an executable
  -c                   build: write an object file instead of an executable
  --cuda               build: link the cuda backend in (run it with --backend=cuda;
                       only where schedc was built with CUDA and NCCL)
  -g                   build: keep the runtime's debug information in the executable
                       (dropped by default: 48 of an executable's 50 MB)
  --fsdp               a .csv's stages are FSDP modules over -D dp=N replicas (default
                       2; -D dp=N without --replicate says so too): a compute-only file
                       gets UNSHARD, RESHARD and REDUCE_GRAD as PyTorch adds them. Without
                       these, the stages are plain modules: UNSHARD/RESHARD do nothing
  --replicate          a .csv's stages are replicated (PyTorch's DDP-style `replicate`)
                       over -D dp=N replicas (default 2): REDUCE_GRAD all-reduces their
                       gradients, added where the file has none
  --gpus=N, --global-batch=B  plan: the accelerators, and the sequences of a step
  --sequence=S         plan: the sequence length (default: the model's)
  --memory-cap=GiB     plan: what an accelerator may hold (default: its memory);
  --headroom=PCT       or the percent of its memory to leave free
  --schedules=A,B      plan: the stdlib families to search (default: all of them)
  --top=K              plan: the configurations to print (default 5)
  --export=FILE.csv    plan: write the winner as a PyTorch pipeline schedule CSV
  --exhaustive         plan: check every configuration (no pruning; slow)
  --error-limit=N      Stop after N errors (default 20, 0 means no limit)
  --events=FILE        check, run: write every event (rank, kind, layer, batches,
                       start, length, memory) as CSV, in the format of the reference traces
)" + std::string(sim::kWarningsHelp) +
         R"(
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
  if (s == "import")
    return Command::Import;
  if (s == "export")
    return Command::Export;
  if (s == "plan")
    return Command::Plan;
  if (s == "help" || s == "--help" || s == "-h")
    return Command::Help;
  if (s == "--version")
    return Command::Version;
  return std::nullopt;
}

} // namespace

namespace {

// The options that say what to read: -I, --schedule, --error-limit. Whether
// `args`' current argument is one of them; a bad value sets `error`.
bool readInputOption(ArgumentList &args, Options &o, std::string &error) {
  std::string v;
  if (args.value("-I", v)) {
    o.includes.push_back(v);
  } else if (args.value("--schedule", v)) {
    o.schedule = v;
  } else if (args.value("--error-limit", v)) {
    uint64_t n = 0;
    if (!parseWholeNumber(v, 0, 100000, n))
      error = "--error-limit needs a number from 0 to 100000";
    o.errorLimit = static_cast<unsigned>(n);
  } else {
    return false;
  }
  return true;
}

// --format's value: text or json (the diagnostics' format); draw also takes svg or html.
std::optional<Format> formatNamed(const std::string &v, Command command) {
  if (v == "text" || v == "json")
    return v == "text" ? Format::Text : Format::Json;
  if (command == Command::Draw && (v == "svg" || v == "html"))
    return v == "svg" ? Format::Svg : Format::Html;
  return std::nullopt;
}

// The options that say what to write: -o, --emit, --format, --trace, --events, -O0..-O3,
// --emit-llvm, -c, --cuda, -g.
bool readOutputOption(ArgumentList &args, Options &o, std::string &error) {
  const std::string &a = args.current();
  std::string v;
  if (args.value("-o", v)) {
    o.output = v;
  } else if (args.value("--emit", v)) {
    if (v == "ast" || v == "ir")
      o.emit = v == "ast" ? Emit::Ast : Emit::Ir;
    else
      error = "unknown --emit kind `" + v + "` (expected ast or ir)";
  } else if (args.value("--format", v)) {
    if (std::optional<Format> format = formatNamed(v, o.command))
      o.format = *format;
    else
      error = o.command == Command::Draw ? "unknown --format `" + v + "` for draw (expected svg or html)"
                                         : "unknown --format `" + v + "` (expected text or json)";
  } else if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
    o.optLevel = static_cast<unsigned>(a[2] - '0');
  } else if (a == "--emit-llvm" || a == "-c" || a == "--cuda" || a == "-g") {
    (a == "-c" ? o.objectOnly : a == "--cuda" ? o.cuda : a == "-g" ? o.debugInfo : o.emitLLVM) = true;
  } else if (a == "--fsdp" || a == "--replicate") {
    (a == "--fsdp" ? o.fsdp : o.replicate) = true;
  } else if (a == "--comms") {
    o.comms = true;
    if (o.command != Command::Export)
      error = "--comms is an option of export";
  } else {
    return false;
  }
  return true;
}

// plan's own options: --gpus, --global-batch, --sequence, --memory-cap, --headroom,
// --schedules, --top, --export, --exhaustive.
bool readPlanOption(ArgumentList &args, Options &o, std::string &error) {
  PlanOptions &p = o.plan;
  std::string v;
  uint64_t n = 0;
  auto whole = [&](const char *flag, uint64_t lo, uint64_t hi, int64_t &out) {
    if (parseWholeNumber(v, lo, hi, n))
      out = static_cast<int64_t>(n);
    else
      error = std::string(flag) + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  };
  bool taken = true;
  if (args.value("--gpus", v)) {
    whole("--gpus", 1, 65536, p.accelerators);
  } else if (args.value("--global-batch", v)) {
    whole("--global-batch", 1, 1 << 24, p.globalBatch);
  } else if (args.value("--sequence", v)) {
    whole("--sequence", 1, 1 << 24, p.sequence);
  } else if (args.value("--memory-cap", v)) {
    if (!parseDecimal(v, 0.001, 1e6, p.memoryCapGiB))
      error = "--memory-cap needs the GiB an accelerator may hold, a number above 0 (e.g. 70 or 72.5)";
  } else if (args.value("--headroom", v)) {
    if (!parseDecimal(v, 0, 99, p.headroom))
      error = "--headroom needs the percent of an accelerator's memory to leave free, from 0 to 99";
  } else if (args.value("--schedules", v)) {
    p.schedules.clear();
    for (size_t start = 0; start <= v.size();) {
      size_t comma = std::min(v.find(',', start), v.size());
      p.schedules.push_back(v.substr(start, comma - start));
      start = comma + 1;
    }
  } else if (args.value("--top", v)) {
    if (!parseWholeNumber(v, 1, 1000, p.top))
      error = "--top needs a whole number from 1 to 1000";
  } else if (args.value("--export", v)) {
    p.exportFile = v;
  } else if (args.current() == "--exhaustive") {
    p.exhaustive = true;
  } else {
    taken = false;
  }
  if (taken && o.command != Command::Plan && error.empty())
    error = args.current() + " is an option of plan";
  return taken;
}

// An input file (compare takes several).
void readInput(const std::string &a, Options &o, std::string &error) {
  if (!a.empty() && a[0] == '-' && a != "-") {
    error = "unknown option `" + a + "`";
  } else if (o.input.empty() || o.command == Command::Compare) {
    if (o.input.empty())
      o.input = a;
    o.inputs.push_back(a);
  } else {
    error = "more than one input file (`" + o.input + "` and `" + a + "`)";
  }
}

// What is wrong with the hardware cost model's options together ("" if nothing).
std::string checkHardwareOptions(Options &o) {
  if (std::string wrong = sim::checkCostOptions(o); !wrong.empty())
    return wrong;
  if (o.hardwareCost && o.command != Command::Check && o.command != Command::Draw && o.command != Command::Compare &&
      o.command != Command::Plan)
    return "the hardware cost model is for check, draw, compare and plan";
  return "";
}

// The first option given that writes what a table-printing command (compare, plan) does not:
// events, a trace, a dump, LLVM IR or an object, the cuda backend; null if none.
const char *otherOutputOption(const Options &o) {
  return !o.eventsFile.empty()        ? "--events"
         : !o.traceFile.empty()       ? "--trace"
         : o.emit != Emit::None       ? "--emit"
         : o.emitLLVM || o.objectOnly ? "--emit-llvm or -c"
         : o.cuda                     ? "--cuda"
         : o.debugInfo                ? "-g"
                                      : nullptr;
}

// What is wrong with plan's command line ("" if nothing): it reads no file, and chooses the
// schedule's parameters itself.
std::string checkPlanOptions(Options &o) {
  const PlanOptions &p = o.plan;
  if (!o.input.empty())
    return "plan reads no schedule file (`" + o.input + "`): it searches the stdlib schedules (--schedules=LIST)";
  if (o.model.empty() || o.hardware.empty())
    return "plan needs a model and a machine: --model=NAME|FILE --hardware=NAME|FILE";
  if (!p.accelerators || !p.globalBatch)
    return "plan needs --gpus=N (the accelerators) and --global-batch=B (sequences a step)";
  if (p.memoryCapGiB > 0 && p.headroom >= 0)
    return "--memory-cap and --headroom both set the memory a configuration may use; choose one";
  if (!o.defines.empty())
    return "plan chooses the schedules' parameters itself; -D belongs to check (the command plan prints)";
  if (o.fsdp || o.replicate || !o.includes.empty())
    return std::string(o.fsdp        ? "--fsdp"
                       : o.replicate ? "--replicate"
                                     : "-I") +
           " belongs to check: plan searches the stdlib schedules and its own orders, read as plain pipeline stages";
  if (std::string wrong = checkHardwareOptions(o); !wrong.empty())
    return wrong;
  const char *other = !o.schedule.empty() ? "--schedule" : otherOutputOption(o);
  return other ? std::string("plan prints a table; ") + other +
                     " is not available (it belongs to check or build: run them on the command plan prints)"
               : "";
}

// What is wrong with options that are each right alone ("" if nothing).
std::string checkTogether(Options &o) {
  if (o.command == Command::Plan)
    return checkPlanOptions(o);
  if (o.input.empty())
    return "no input file (usage: schedc <command> FILE [options]; see schedc --help)";
  if (std::string wrong = checkHardwareOptions(o); !wrong.empty())
    return wrong;
  if (o.command == Command::Import && !isPytorchSchedule(o.input))
    return "import reads a PyTorch schedule file (FILE.csv); `" + o.input + "` is not one";
  if (o.fsdp && o.replicate)
    return "--fsdp and --replicate are two readings of a PyTorch file's stages (sharded, or whole on each "
           "replica); choose one";
  if ((o.fsdp || o.replicate) &&
      std::none_of(o.inputs.begin(), o.inputs.end(), [](const std::string &f) { return isPytorchSchedule(f); }))
    return std::string(o.fsdp ? "--fsdp reads a PyTorch schedule file's (FILE.csv) stages as FSDP modules"
                              : "--replicate reads a PyTorch schedule file's (FILE.csv) stages as replicated "
                                "modules") +
           "; `" + o.input + "` is not one";
  if (o.command == Command::Import && (!o.defines.empty() || o.emit != Emit::None || o.format != Format::Text))
    return "import writes the schedule as it is; -D, --emit and --format belong to check";
  if (o.command == Command::Export && o.replicate)
    return "export does not write replicated stages' REDUCE_GRADs yet (an all-reduce over the replicas); export the "
           "file without --replicate";
  if (o.command == Command::Export && (o.emit != Emit::None || o.format != Format::Text))
    return "export writes a CSV file; --emit and --format belong to check";
  if (o.command != Command::Compare)
    return {};
  // The table is the output: options that write other outputs belong to check and draw.
  const char *other = !o.output.empty() ? "-o" : o.format != Format::Text ? "--format" : otherOutputOption(o);
  return other ? std::string("compare prints a table; ") + other + " is not available (use check for one schedule)"
               : "";
}

} // namespace

std::optional<Options> parseOptions(const std::vector<std::string> &argv, std::string &error) {
  Options o;
  error.clear();
  if (argv.empty())
    return o; // help
  std::optional<Command> cmd = commandNamed(argv[0]);
  if (!cmd) {
    error =
        "unknown command `" + argv[0] + "` (expected check, draw, build, run, compare, import, export, plan or help)";
    return std::nullopt;
  }
  o.command = *cmd;
  if (o.command == Command::Help || o.command == Command::Version)
    return o;
  error = sim::defaultThreads(o.threads);
  if (!error.empty())
    return std::nullopt;
  ArgumentList args(std::vector<std::string>(argv.begin() + 1, argv.end()));
  while (!args.done() && error.empty() && args.error().empty()) {
    const std::string &a = args.take();
    if (a == "--help" || a == "-h") {
      o.command = Command::Help;
      return o;
    }
    if (readInputOption(args, o, error) || readOutputOption(args, o, error) || readPlanOption(args, o, error))
      continue;
    if (std::string flag = sim::readSharedOption(args, o, error); !flag.empty()) {
      std::vector<std::string> typed = args.currentWithValue();
      o.sharedArguments.insert(o.sharedArguments.end(), typed.begin(), typed.end());
      if (error.empty() && o.command == Command::Build)
        error = flag + " is an option of the compiled program, not of build (pass it when it runs)";
    } else {
      readInput(a, o, error);
    }
  }
  if (!args.error().empty()) // a flag last on the line, whose reader saw an empty value
    error = args.error();
  else if (error.empty())
    error = checkTogether(o);
  if (!error.empty())
    return std::nullopt;
  return o;
}

} // namespace schedc::driver
