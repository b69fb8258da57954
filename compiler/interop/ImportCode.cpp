// ImportCode implementation: a fragment's fields filled with its integers, or with the names
// of the holes they stand for.
#include "interop/ImportCode.h"

#include "diagnostics/InternalError.h"

#include <fmt/format.h>

namespace schedc::interop {

namespace {

template <class T> std::string formatted(const Fragment &f, const std::array<T, 4> &args) {
  switch (f.count) {
  case 0: return fmt::format(fmt::runtime(f.form));
  case 1: return fmt::format(fmt::runtime(f.form), args[0]);
  case 2: return fmt::format(fmt::runtime(f.form), args[0], args[1]);
  case 3: return fmt::format(fmt::runtime(f.form), args[0], args[1], args[2]);
  case 4: return fmt::format(fmt::runtime(f.form), args[0], args[1], args[2], args[3]);
  }
  SCHEDC_UNREACHABLE("a fragment of more than four integers");
}

} // namespace

std::string holeName(uint32_t k) {
  return "_hole" + std::to_string(k);
}

std::string CodeText::text() const {
  std::string out;
  for (const Fragment &f : fragments_)
    out += formatted(f, f.numbers);
  return out;
}

std::string CodeText::shape() const {
  std::string out;
  uint32_t next = 0;
  for (const Fragment &f : fragments_) {
    std::array<std::string, 4> holes;
    for (uint8_t i = 0; i < f.count; ++i)
      holes[i] = holeName(next++);
    out += formatted(f, holes);
  }
  return out;
}

} // namespace schedc::interop
