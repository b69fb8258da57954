// SharedOptions implementation: the flag is recognised first (so `--hidden` last on the line
// is a missing value, not an unknown option), then its value is parsed by its owner.
#include "sim/SharedOptions.h"

namespace schedc::sim {

const char *const kWarningsHelp =
    R"(  --no-warn=CODE,...   leave these end-of-step warnings unsaid, where the schedule means
                       it: leftover (activations or gradients still held), unreceived
                       (messages never received)
)";

namespace {

// --no-warn's value: codes separated by commas.
void parseSilenced(const std::string &value, SilencedWarnings &silenced, std::string &error) {
  size_t start = 0;
  do {
    size_t comma = value.find(',', start);
    std::string code = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (code == "leftover")
      silenced.leftover = true;
    else if (code == "unreceived")
      silenced.unreceived = true;
    else
      error = "--no-warn takes leftover or unreceived (separated by commas), not `" + code + "`";
    start = comma == std::string::npos ? value.size() + 1 : comma + 1;
  } while (start <= value.size() && error.empty());
}

} // namespace

std::string readSharedOption(ArgumentList &args, ByteModel &bytes, Limits &limits, SilencedWarnings &silenced,
                             std::string &error) {
  std::string value;
  if (args.current().rfind("--no-warn", 0) == 0 && args.value("--no-warn", value)) {
    if (error.empty() && args.error().empty())
      parseSilenced(value, silenced, error);
    return "--no-warn";
  }
  if (std::string flag = byteModelFlag(args.current()); !flag.empty() && args.value(flag, value)) {
    if (error.empty() && args.error().empty())
      parseByteModelOption(flag, value, bytes, error);
    return flag;
  }
  if (std::string flag = limitFlag(args.current()); !flag.empty() && args.value(flag, value)) {
    if (error.empty() && args.error().empty())
      parseLimitOption(flag, value, limits, error);
    return flag;
  }
  return {};
}

} // namespace schedc::sim
