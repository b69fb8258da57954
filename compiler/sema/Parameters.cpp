// Parameters implementation.
#include "sema/Parameters.h"

#include "sema/SemaContext.h"

#include <cerrno>
#include <cstdlib>

namespace schedc::sema {

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

std::optional<std::map<std::string, int64_t>>
resolveDefines(const ir::Function &schedule, const std::vector<std::string> &defines, DiagnosticEngine &diags) {
  std::map<std::string, int64_t> out;
  std::vector<std::string_view> names;
  std::string list;
  for (const ir::Param &p : schedule.params) {
    names.push_back(p.name);
    list += (list.empty() ? "" : ", ") + p.name;
  }
  bool ok = true;
  for (const std::string &d : defines) {
    std::string error;
    auto parsed = parseDefine(d, error);
    if (!parsed) {
      diags.error({}, error);
      ok = false;
      continue;
    }
    auto &[name, value] = *parsed;
    bool known = false;
    for (const ir::Param &p : schedule.params)
      known |= p.name == name;
    if (!known) {
      diags.error({}, "schedule `" + schedule.name + "` has no parameter `" + name + "`" + didYouMean(name, names) +
                          " (its parameters: " + list + ")");
      ok = false;
    } else if (!out.emplace(name, value).second) {
      diags.error({}, "parameter `" + name + "` is set twice with -D");
      ok = false;
    }
  }
  for (const ir::Param &p : schedule.params)
    if (!p.defaultValue && !out.count(p.name)) {
      diags.error(p.range, "parameter `" + p.name + "` has no default; set it with `-D " + p.name + "=N`");
      ok = false;
    }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

} // namespace schedc::sema
