// TextTable — the tables `compare` and `plan` print: every column as wide as its widest
// cell, two spaces between columns, text left-aligned and numbers right-aligned (the last
// column unpadded); and a figure as a printf format writes it.
#pragma once

#include <iosfwd>
#include <set>
#include <string>
#include <vector>

namespace schedc::driver {

using TableRow = std::vector<std::string>;

// `rows` (the header first), the columns in `leftAligned` on the left.
void printTable(const std::vector<TableRow> &rows, const std::set<size_t> &leftAligned, std::ostream &out);

// `value` as `format` (one floating-point conversion) writes it.
std::string formatted(const char *format, double value);

} // namespace schedc::driver
