// output.h - Writing to stderr without ever throwing: a full or closed
// stderr (2>/dev/full, 2>&-) must not abort tilejit.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tilejit::cli {

/// Writes `text` to stderr; a failed write is ignored.
inline void print_err(std::string_view text) {
  if (!text.empty())
    (void)std::fwrite(text.data(), 1, text.size(), stderr);
  (void)std::fflush(stderr);
}

/// "1 entry", "2 entries": `count` with the singular or the plural.
inline std::string counted(size_t count, std::string_view one,
                           std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

} // namespace tilejit::cli
