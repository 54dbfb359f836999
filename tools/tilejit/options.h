// options.h - Parsing of the options the op subcommands share.
#pragma once

#include "registry.h"

#include "tilejit/compiler/compile.h"

#include <span>
#include <string_view>
#include <vector>

namespace tilejit::cli {

/// `tilejit compile|run|bench OP [options]`, parsed.
struct OpCommand {
  const ops::OpInfo *op = nullptr;
  ops::OpArgs args;
  std::vector<Stage> dump; ///< --dump (compile)
  bool timings = false;    ///< --timings
  int iters = 20;          ///< --iters (bench)
};

/// Parses OP and its options; `allowed` lists the options this subcommand
/// takes. Throws UserError for an unknown op or option (with a suggestion),
/// a malformed value, or a --set name the op does not have.
OpCommand parse_op_command(std::string_view command,
                           std::span<const std::string_view> argv,
                           const std::vector<std::string_view> &allowed);

} // namespace tilejit::cli
