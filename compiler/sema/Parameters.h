// Parameters — checks `-D name=value` overrides against the entry schedule's parameters and
// produces the list of overrides the interpreter and compiled programs start from. An
// unknown name, a malformed value, a name given twice, or a parameter with neither a
// default nor an override is an error.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schedc::sema {

// Parses "name=value" (value a decimal integer, optionally negative).
// On failure returns nullopt and sets `error`.
std::optional<std::pair<std::string, int64_t>> parseDefine(const std::string &text, std::string &error);

// Checks `defines` (raw "-D" texts) against `schedule`; returns the overrides by parameter
// name, or nullopt after reporting every problem.
std::optional<std::map<std::string, int64_t>>
resolveDefines(const ir::Function &schedule, const std::vector<std::string> &defines, DiagnosticEngine &diags);

} // namespace schedc::sema
