// cmd_list.cpp - `tilejit list [OP]`: the ops with their parameters and
// default shapes, or one op's tensors and parameters; from the declarations.
#include "commands.h"
#include "options.h"
#include "suggest.h"

#include "tilejit/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <fmt/ranges.h>

namespace tilejit::cli {

int cmd_list(Args args) {
  if (args.size() > 1)
    throw UserError(
        fmt::format("tilejit list: takes at most one op, got '{}'", args[1]));
  if (args.size() == 1) {
    const ops::OpDef *op = ops::find_op(args[0]);
    if (!op) {
      std::vector<std::string_view> names;
      for (const ops::OpDef *o : ops::all_ops())
        names.push_back(o->name);
      throw UserError(fmt::format("tilejit list: unknown op '{}'{}", args[0],
                                  did_you_mean(args[0], names)));
    }
    fmt::print("{}", op_help(*op));
    return kOk;
  }
  size_t width = 20; // the longest name's, so that the summaries line up
  for (const ops::OpDef *op : ops::all_ops())
    width = std::max(width, op->name.size());
  for (const ops::OpDef *op : ops::all_ops()) {
    std::vector<std::string_view> params;
    for (const ops::ParamDecl &p : op->params)
      params.push_back(p.name);
    fmt::print("{:<{}} {}\n{:<{}} parameters: {}; --shape {} (default {})\n",
               op->name, width, op->summary, "", width,
               params.empty() ? std::string("(none)")
                              : fmt::format("{}", fmt::join(params, ", ")),
               op->cli_shape, fmt::join(op->default_shape, "x"));
  }
  return kOk;
}

} // namespace tilejit::cli
