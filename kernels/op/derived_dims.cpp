// derived_dims.cpp - The names of the dimensions an op derives
// (OpDef::derived_dims), which `--set` may give instead.
#include "op/op_def.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace tilejit::ops {

std::vector<std::string> derivable_dims(const OpDef &op) {
  if (!op.derived_dims)
    return {};
  // The default shape's dimensions and the default parameters: the names
  // do not depend on the sizes.
  const std::vector<std::string> cli = shape_items(op.cli_shape);
  const bool rest = std::find(cli.begin(), cli.end(), "*") != cli.end();
  const size_t skip = rest && op.default_shape.size() + 1 >= cli.size()
                          ? op.default_shape.size() + 1 - cli.size()
                          : 0;
  std::vector<std::pair<std::string_view, int64_t>> dims;
  size_t axis = skip;
  for (const std::string &item : cli)
    if (item != "*" && axis < op.default_shape.size())
      dims.emplace_back(item, op.default_shape[axis++]);
  std::vector<ParamValue> params;
  for (const ParamDecl &p : op.params)
    params.push_back(p.default_value);
  std::vector<std::string> names;
  for (auto &[name, value] : op.derived_dims(ShapeArgs{&op, dims, params, {}}))
    names.push_back(name);
  return names;
}

} // namespace tilejit::ops
