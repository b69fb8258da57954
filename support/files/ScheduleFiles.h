// ScheduleFiles — what kind of schedule a file is, by its name: the one place that says so,
// for the driver (which imports such a file before checking it) and the reports (which name
// an imported event's action).
#pragma once

#include <string_view>

namespace schedc {

// Whether `path` names a PyTorch pipeline schedule file (docs/pytorch.md): it ends in .csv
// (and is more than that ending).
inline bool isPytorchSchedule(std::string_view path) {
  return path.size() > 4 && path.ends_with(".csv");
}

} // namespace schedc
