// Suggest — "did you mean" for diagnostics: the known name closest to a misspelled one,
// by optimal string alignment distance (a swap of two neighbouring letters is one edit),
// accepted only when at most a third of the name is wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace schedc {

// The closest of `candidates` to `name`, or empty if none is close.
std::string suggest(std::string_view name, const std::vector<std::string_view> &candidates);
// "; did you mean `x`?" or "".
std::string didYouMean(std::string_view name, const std::vector<std::string_view> &candidates);

} // namespace schedc
