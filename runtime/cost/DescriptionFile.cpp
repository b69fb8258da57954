// DescriptionFile implementation: a TOML table read with toml++ (header-only here), each
// value checked against its key's type; command-line text read as the same types.
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
#include "cost/DescriptionFile.h"

#include <toml++/toml.h>

#include <charconv>
#include <cmath>

namespace schedc::cost {

namespace {

const char *typeName(SettingType t) {
  switch (t) {
  case SettingType::Integer: return "an integer";
  case SettingType::Number: return "a number";
  case SettingType::Boolean: return "true or false";
  case SettingType::Text: return "a string";
  case SettingType::Table: return "an array of rows of numbers, as [[1, 2], [3, 4]]";
  }
  return "";
}

std::optional<Setting> fromNode(SettingType type, const toml::node &node) {
  Setting s;
  switch (type) {
  case SettingType::Integer:
    if (auto v = node.value_exact<int64_t>()) {
      s.integer = *v;
      return s;
    }
    break;
  case SettingType::Number:
    if (auto v = node.value<double>(); v && (node.is_floating_point() || node.is_integer())) {
      s.number = *v;
      return s;
    }
    break;
  case SettingType::Boolean:
    if (auto v = node.value_exact<bool>()) {
      s.boolean = *v;
      return s;
    }
    break;
  case SettingType::Text:
    if (auto v = node.value_exact<std::string>()) {
      s.text = *v;
      return s;
    }
    break;
  case SettingType::Table: {
    const toml::array *rows = node.as_array();
    if (!rows)
      break;
    for (const toml::node &row : *rows) {
      const toml::array *cells = row.as_array();
      if (!cells)
        return std::nullopt;
      std::vector<double> values;
      for (const toml::node &cell : *cells) {
        std::optional<double> v = cell.value<double>();
        if (!v || !(cell.is_floating_point() || cell.is_integer()))
          return std::nullopt;
        values.push_back(*v);
      }
      s.rows.push_back(std::move(values));
    }
    return s;
  }
  }
  return std::nullopt;
}

FileProblem at(const toml::source_region &where, std::string message) {
  return {static_cast<int>(where.begin.line), static_cast<int>(where.begin.column), std::move(message)};
}

} // namespace

std::optional<std::vector<FileSetting>> readSettings(const std::string &text, const std::vector<KeyType> &keys,
                                                     FileProblem &problem) {
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error &e) {
    problem = at(e.source(), std::string(e.description()));
    return std::nullopt;
  }
  std::vector<FileSetting> settings;
  for (const auto &[key, node] : table) {
    const KeyType *type = nullptr;
    for (const KeyType &k : keys)
      if (k.name == key.str())
        type = &k;
    if (!type) {
      std::string names;
      for (const KeyType &k : keys)
        names += (names.empty() ? "" : ", ") + std::string(k.name);
      problem = at(key.source(), "unknown key `" + std::string(key.str()) + "` (keys: " + names + ")");
      return std::nullopt;
    }
    std::optional<Setting> value = fromNode(type->type, node);
    if (!value) {
      problem = at(node.source(), std::string(type->name) + " must be " + typeName(type->type));
      return std::nullopt;
    }
    FileSetting s{std::string(key.str()), std::move(*value), static_cast<int>(node.source().begin.line),
                  static_cast<int>(node.source().begin.column)};
    if (s.key == "preset") // applied before the keys it is overridden by
      settings.insert(settings.begin(), std::move(s));
    else
      settings.push_back(std::move(s));
  }
  return settings;
}

std::optional<Setting> settingFromText(std::string_view key, SettingType type, const std::string &value,
                                       std::string &wrong) {
  Setting s;
  const char *begin = value.data(), *end = value.data() + value.size();
  switch (type) {
  case SettingType::Integer: {
    auto [stop, ec] = std::from_chars(begin, end, s.integer);
    if (ec == std::errc() && stop == end && !value.empty())
      return s;
    break;
  }
  case SettingType::Number: {
    auto [stop, ec] = std::from_chars(begin, end, s.number);
    if (ec == std::errc() && stop == end && !value.empty() && std::isfinite(s.number))
      return s;
    break;
  }
  case SettingType::Boolean:
    if (value == "true" || value == "false") {
      s.boolean = value == "true";
      return s;
    }
    break;
  case SettingType::Text: s.text = value; return s;
  case SettingType::Table: { // read as the value of a TOML key
    try {
      toml::table parsed = toml::parse("value = " + value);
      if (const toml::node *node = parsed.get("value"))
        if (std::optional<Setting> table = fromNode(type, *node))
          return table;
    } catch (const toml::parse_error &) {
    }
    break;
  }
  }
  wrong = std::string(key) + " must be " + typeName(type) + ", not `" + value + "`";
  return std::nullopt;
}

} // namespace schedc::cost
