// SharedOptions implementation: the flag is recognised first (so `--hidden` last on the line
// is a missing value, not an unknown option), then its value is parsed by its owner.
#include "sim/SharedOptions.h"

namespace schedc::sim {

std::string readSharedOption(ArgumentList &args, ByteModel &bytes, Limits &limits, std::string &error) {
  std::string value;
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
