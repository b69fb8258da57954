// Define — a `-D name=value` of schedc and of compiled programs: a parameter's name and its
// integer value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace schedc {

// Parses "name=value" (value a decimal integer, optionally negative); nullopt with `error`
// saying what is wrong.
std::optional<std::pair<std::string, int64_t>> parseDefine(const std::string &text, std::string &error);

} // namespace schedc
