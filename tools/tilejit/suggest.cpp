// suggest.cpp - Edit-distance suggestions for mistyped names.
#include "suggest.h"

#include <algorithm>

namespace tilejit::cli {

/// Edits (insert, delete, substitute, swap two neighbours) turning a into b.
static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest(std::string_view word,
                    const std::vector<std::string_view> &candidates) {
  size_t best = std::max<size_t>(1, word.size() / 3) + 1;
  std::string choice;
  for (std::string_view c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best) {
      best = d;
      choice = c;
    }
  }
  return choice;
}

std::string did_you_mean(std::string_view word,
                         const std::vector<std::string_view> &candidates) {
  std::string c = closest(word, candidates);
  return c.empty() ? std::string() : " (did you mean '" + c + "'?)";
}

} // namespace tilejit::cli
