// Unit tests of command-line parsing: the cursor both parsers share, and schedc's options.
#include "driver/Options.h"
#include "engine/Budget.h"
#include "options/ArgumentList.h"

#include <gtest/gtest.h>

using namespace schedc::driver;
using schedc::ArgumentList;

TEST(ArgumentList, ReadsValuesGluedSpacedOrAfterEquals) {
  ArgumentList args({"-Dx=1", "-D", "y=2", "--format=json", "--format", "text", "-o"});
  std::string v;
  args.take();
  EXPECT_TRUE(args.value("-D", v));
  EXPECT_EQ(v, "x=1");
  args.take();
  EXPECT_TRUE(args.value("-D", v));
  EXPECT_EQ(v, "y=2"); // and the cursor moved past it
  args.take();
  EXPECT_FALSE(args.value("--form", v)); // a longer flag is not a prefix match
  EXPECT_TRUE(args.value("--format", v));
  EXPECT_EQ(v, "json");
  args.take();
  EXPECT_TRUE(args.value("--format", v));
  EXPECT_EQ(v, "text");
  EXPECT_TRUE(args.error().empty());
  args.take();
  EXPECT_TRUE(args.value("-o", v)); // last on the line: recognised, its value missing
  EXPECT_EQ(v, "");
  EXPECT_EQ(args.error(), "option `-o` needs a value");
  EXPECT_TRUE(args.done());
}

TEST(Options, SaysAMissingValueRatherThanItsReadersComplaint) {
  std::string error;
  for (const char *flag : {"--cost-model", "--emit", "--format", "--hidden", "--max-steps", "--error-limit"}) {
    EXPECT_FALSE(parseOptions({"check", "a", flag}, error)) << flag;
    EXPECT_EQ(error, std::string("option `") + flag + "` needs a value");
  }
  EXPECT_FALSE(parseOptions({"build", "a", "--hidden=64"}, error));
  EXPECT_EQ(error, "--hidden is an option of the compiled program, not of build (pass it when it runs)");
  EXPECT_FALSE(parseOptions({"compare", "a", "b", "--trace=t.json"}, error));
  EXPECT_EQ(error, "compare prints a table; --trace is not available (use check for one schedule)");
  EXPECT_FALSE(parseOptions({"check", "a", "--format=svg"}, error));
  EXPECT_EQ(error, "unknown --format `svg` (expected text or json)");
  auto draw = parseOptions({"draw", "a", "--format=html", "-O3", "-c"}, error);
  ASSERT_TRUE(draw) << error;
  EXPECT_EQ(draw->format, Format::Html);
  EXPECT_EQ(draw->optLevel, 3u);
  EXPECT_TRUE(draw->objectOnly);
}

TEST(Options, ParsesACheckCommand) {
  std::string error;
  auto o = parseOptions({"check", "f.sched", "-D", "layers=8", "-Dbatches=2", "--format=json", "-I", "inc",
                         "--schedule", "fsdp", "--emit=ir"},
                        error);
  ASSERT_TRUE(o) << error;
  EXPECT_EQ(o->command, Command::Check);
  EXPECT_EQ(o->input, "f.sched");
  EXPECT_EQ(o->defines, (std::vector<std::string>{"layers=8", "batches=2"}));
  EXPECT_EQ(o->includes, (std::vector<std::string>{"inc"}));
  EXPECT_EQ(o->schedule, "fsdp");
  EXPECT_EQ(o->format, Format::Json);
  EXPECT_EQ(o->emit, Emit::Ir);
}

// Without the options, a run has the default budgets, and the usage text states them.
TEST(Options, DefaultLimitsAreInForceAndStated) {
  std::string error;
  auto o = parseOptions({"check", "f.sched"}, error);
  ASSERT_TRUE(o) << error;
  // Room for a 405B-class step (some 210 M statements: engine/Budget.h).
  EXPECT_GE(o->limits.maxSteps, 500'000'000u);
  EXPECT_EQ(o->limits.maxSteps, schedc::sim::Limits{}.maxSteps);
  EXPECT_EQ(o->limits.maxSeconds, 600);
  std::string help = schedc::sim::kLimitsHelp;
  EXPECT_NE(help.find("(default " + std::to_string(schedc::sim::Limits{}.maxSteps) + ")"), std::string::npos) << help;
}

TEST(Options, RejectsBadInput) {
  std::string error;
  EXPECT_FALSE(parseOptions({"frobnicate"}, error));
  EXPECT_FALSE(parseOptions({"check"}, error));
  EXPECT_NE(error.find("no input file"), std::string::npos);
  EXPECT_FALSE(parseOptions({"check", "a", "b"}, error));
  EXPECT_FALSE(parseOptions({"check", "a", "--bogus"}, error));
  EXPECT_FALSE(parseOptions({"check", "a", "--format=xml"}, error));
  EXPECT_FALSE(parseOptions({"check", "a", "-D"}, error));
  EXPECT_FALSE(parseOptions({"check", "a", "--schedulex"}, error));
}

TEST(Options, HelpAndVersion) {
  std::string error;
  EXPECT_EQ(parseOptions({}, error)->command, Command::Help);
  EXPECT_EQ(parseOptions({"--help"}, error)->command, Command::Help);
  EXPECT_EQ(parseOptions({"check", "x", "--help"}, error)->command, Command::Help);
  EXPECT_EQ(parseOptions({"--version"}, error)->command, Command::Version);
}
