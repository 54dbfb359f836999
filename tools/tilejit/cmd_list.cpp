// cmd_list.cpp - `tilejit list`: the ops, their parameters and default shapes.
#include "commands.h"

#include "registry.h"

#include "tilejit/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::cli {

int cmd_list(Args args) {
  if (!args.empty())
    throw UserError(
        fmt::format("tilejit list: takes no arguments, got '{}'", args[0]));
  for (const ops::OpInfo &op : ops::all_ops())
    fmt::print("{:<20} {}\n{:<20} parameters: {}; default shape: {}\n", op.name,
               op.summary, "",
               op.params.empty()
                   ? std::string("(none)")
                   : fmt::format("{}", fmt::join(op.params, ", ")),
               fmt::join(op.default_shape, "x"));
  return kOk;
}

} // namespace tilejit::cli
