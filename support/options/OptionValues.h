// OptionValues — how the numbers that command-line options take are read, one way for schedc
// and for compiled programs: decimal digits only (no sign, spaces, exponent or hex; a point
// where a fraction is allowed), within the option's range; anything else is refused with the option's own message.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace schedc {

// `text` as a whole number from `lo` to `hi` into `out`; false (and `out` untouched) if it is
// anything else.
inline bool parseWholeNumber(const std::string &text, uint64_t lo, uint64_t hi, uint64_t &out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

// `text` as a decimal number (digits with at most one point: no sign, spaces or exponent) from
// `lo` to `hi` into `out`; false (and `out` untouched) if it is anything else.
inline bool parseDecimal(const std::string &text, double lo, double hi, double &out) {
  size_t point = text.find('.');
  bool digits = text.find_first_not_of("0123456789.") == std::string::npos &&
                (point == std::string::npos || text.find('.', point + 1) == std::string::npos) &&
                text.find_first_of("0123456789") != std::string::npos;
  if (!digits)
    return false;
  double v = std::strtod(text.c_str(), nullptr);
  if (!(v >= lo && v <= hi))
    return false;
  out = v;
  return true;
}

} // namespace schedc
