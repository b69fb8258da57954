// Unit tests of command-line parsing.
#include "driver/Options.h"

#include <gtest/gtest.h>

using namespace schedc::driver;

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
