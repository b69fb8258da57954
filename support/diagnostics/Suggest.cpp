// Suggest implementation.
#include "diagnostics/Suggest.h"

#include <algorithm>

namespace schedc {

// Optimal string alignment distance: edits, with a swap of two neighbours counting once
// (`cuont` is one step from `count`).
static size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string suggest(std::string_view name, const std::vector<std::string_view> &candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(1, name.size() / 3) + 1; // accept at most a third wrong
  for (std::string_view c : candidates) {
    size_t d = editDistance(name, c);
    if (c != name && d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

std::string didYouMean(std::string_view name, const std::vector<std::string_view> &candidates) {
  std::string s = suggest(name, candidates);
  return s.empty() ? "" : "; did you mean `" + s + "`?";
}

} // namespace schedc
