// suggest.h - "did you mean ...?" for mistyped subcommands, ops, stages and
// options (edit distance, as ninja's ChooseTool does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tilejit::cli {

/// The candidate closest to `word` by edit distance, if close enough to be a
/// plausible typo (distance <= max(1, size/3)); empty otherwise.
std::string closest(std::string_view word,
                    const std::vector<std::string_view> &candidates);

/// " (did you mean 'X'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view word,
                         const std::vector<std::string_view> &candidates);

} // namespace tilejit::cli
