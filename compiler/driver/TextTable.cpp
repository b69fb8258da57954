// TextTable implementation.
#include "driver/TextTable.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace schedc::driver {

void printTable(const std::vector<TableRow> &rows, const std::set<size_t> &leftAligned, std::ostream &out) {
  std::vector<size_t> width;
  for (const TableRow &row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  }
  for (const TableRow &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string pad(width[c] - row[c].size(), ' ');
      bool last = c + 1 == row.size();
      line += (c ? "  " : "") + (leftAligned.count(c) ? row[c] + (last ? "" : pad) : pad + row[c]);
    }
    out << line << "\n";
  }
}

std::string formatted(const char *format, double value) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

} // namespace schedc::driver
