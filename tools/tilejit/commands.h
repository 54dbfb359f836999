// commands.h - The subcommands of the tilejit CLI, one file each.
#pragma once

#include <span>
#include <string_view>

namespace tilejit::cli {

using Args = std::span<const std::string_view>;

int cmd_list(Args args);
int cmd_compile(Args args);
int cmd_run(Args args);
int cmd_bench(Args args);
int cmd_cache(Args args);

/// Exit codes, documented in --help and docs/cli.md.
enum ExitCode { kOk = 0, kUserError = 1, kInternalError = 2, kNoGpu = 77 };

} // namespace tilejit::cli
