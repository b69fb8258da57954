// ImportCode — the code the import writes for a cell, kept as fragments: each a constant
// template (a string literal whose fmt fields `{0}`..`{3}` take integers) and the integers
// it takes. Rendered, the fragments are the line `schedc import` writes; for a table
// (ImportTables.h) their templates, compared by address, are the row's shape, found without
// formatting a character, and their integers the row's values (holes `_hole0`, `_hole1`,
// ... in order).
#pragma once

#include "diagnostics/InternalError.h"

#include <boost/container/small_vector.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace schedc::interop {

struct Fragment {
  const char *form = ""; // a string literal
  uint8_t count = 0;     // integers it takes
  // (a file's numbers are at most 1 000 000, its tags below 32 768: PytorchCsv.h)
  std::array<int32_t, 4> numbers{};
};

class CodeText {
public:
  // Appends `form` (a string literal) with its integers.
  template <class... Ints> CodeText &add(const char *form, Ints... numbers) {
    static_assert(sizeof...(Ints) <= 4, "a fragment takes at most four integers");
    SCHEDC_ASSERT(((numbers >= INT32_MIN && numbers <= INT32_MAX) && ...), "an imported number past 32 bits");
    fragments_.push_back(Fragment{form, static_cast<uint8_t>(sizeof...(Ints)), {static_cast<int32_t>(numbers)...}});
    return *this;
  }
  CodeText &add(const CodeText &more) {
    fragments_.insert(fragments_.end(), more.fragments_.begin(), more.fragments_.end());
    return *this;
  }
  bool empty() const { return fragments_.empty(); }
  void clear() { fragments_.clear(); } // (its room kept)
  const auto &fragments() const { return fragments_; }

  // The code as the import writes it.
  std::string text() const;
  // The shape: the code with the k-th integer `holeName(k)`.
  std::string shape() const;

private:
  boost::container::small_vector<Fragment, 3> fragments_; // most codes have at most three
};

std::string holeName(uint32_t k);

} // namespace schedc::interop
