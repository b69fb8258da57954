// Define implementation: the name an identifier, the value a whole decimal number in range.
#include "options/Define.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace schedc {

std::optional<std::pair<std::string, int64_t>> parseDefine(const std::string &text, std::string &error) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "`-D " + text + "` must have the form `-D name=value`";
    return std::nullopt;
  }
  std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  bool ident = std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_';
  for (char c : name)
    ident &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (!ident) {
    error = "`" + name + "` in `-D " + text + "` is not a parameter name";
    return std::nullopt;
  }
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(value[0]))) {
    error = "the value of `-D " + text + "` is not an integer";
    return std::nullopt;
  }
  if (errno == ERANGE) {
    error = "the value of `-D " + text + "` does not fit in 64 bits";
    return std::nullopt;
  }
  return std::make_pair(name, static_cast<int64_t>(v));
}

} // namespace schedc
