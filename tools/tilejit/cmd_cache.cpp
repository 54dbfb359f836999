// cmd_cache.cpp - `tilejit cache`: where compiled kernels are kept.
#include "commands.h"
#include "suggest.h"

#include "tilejit/error.h"

#include <cstdlib>
#include <fmt/format.h>

namespace tilejit::cli {

/// TILEJIT_CACHE_DIR, else $XDG_CACHE_HOME/tilejit, else ~/.cache/tilejit.
static std::string cache_dir() {
  if (const char *dir = std::getenv("TILEJIT_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fmt::format("{}/tilejit", xdg);
  const char *home = std::getenv("HOME");
  return fmt::format("{}/.cache/tilejit", home ? home : ".");
}

int cmd_cache(Args args) {
  const std::vector<std::string_view> verbs = {"dir"};
  if (args.empty())
    throw UserError("tilejit cache: missing subcommand; one of: dir");
  if (args[0] == "dir") {
    fmt::print("{}\n", cache_dir());
    return kOk;
  }
  throw UserError(fmt::format("tilejit cache: unknown subcommand '{}'{}; one "
                              "of: dir",
                              args[0], did_you_mean(args[0], verbs)));
}

} // namespace tilejit::cli
