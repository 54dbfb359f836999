// options.cpp - Parsing of --shape, --dtype, --set, --dump, --timings, --iters.
#include "options.h"

#include "suggest.h"

#include "tilejit/error.h"

#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::cli {

static int64_t parse_int(std::string_view command, std::string_view option,
                         std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw UserError(fmt::format("tilejit {}: {} '{}' is not a non-negative "
                                "integer",
                                command, option, text));
  return v;
}

static std::vector<int64_t> parse_shape(std::string_view command,
                                        std::string_view text) {
  std::vector<int64_t> shape;
  size_t start = 0;
  while (true) {
    size_t x = text.find('x', start);
    shape.push_back(
        parse_int(command, "--shape", text.substr(start, x - start)));
    if (x == std::string_view::npos)
      break;
    start = x + 1;
  }
  return shape;
}

static std::vector<Stage> parse_stages(std::string_view command,
                                       std::string_view text) {
  std::vector<Stage> stages;
  std::vector<std::string_view> names;
  for (Stage s : kAllStages)
    names.push_back(name_of(s));
  names.push_back("all");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view name = text.substr(start, comma - start);
    if (name == "all") {
      stages.assign(std::begin(kAllStages), std::end(kAllStages));
    } else if (auto s = parse_stage(name)) {
      stages.push_back(*s);
    } else {
      throw UserError(fmt::format("tilejit {}: unknown stage '{}'{}; stages "
                                  "are {}",
                                  command, name, did_you_mean(name, names),
                                  fmt::join(names, ", ")));
    }
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return stages;
}

OpCommand parse_op_command(std::string_view command,
                           std::span<const std::string_view> argv,
                           const std::vector<std::string_view> &allowed) {
  OpCommand out;
  if (argv.empty() || argv[0].starts_with("-"))
    throw UserError(fmt::format("tilejit {}: missing op name; 'tilejit list' "
                                "shows the ops",
                                command));
  std::vector<std::string_view> op_names;
  for (const ops::OpInfo &op : ops::all_ops())
    op_names.push_back(op.name);
  out.op = ops::find_op(argv[0]);
  if (!out.op)
    throw UserError(fmt::format("tilejit {}: unknown op '{}'{}", command,
                                argv[0], did_you_mean(argv[0], op_names)));

  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view opt = argv[i], value;
    if (size_t eq = opt.find('='); opt.starts_with("--") && eq != opt.npos &&
                                   opt.substr(0, eq) != "--set") {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
    }
    if (std::find(allowed.begin(), allowed.end(), opt) == allowed.end())
      throw UserError(fmt::format("tilejit {}: unknown option '{}'{}", command,
                                  opt, did_you_mean(opt, allowed)));
    if (opt == "--timings") {
      out.timings = true;
      continue;
    }
    if (value.empty()) {
      if (i + 1 >= argv.size())
        throw UserError(
            fmt::format("tilejit {}: option {} needs a value", command, opt));
      value = argv[++i];
    }
    if (opt == "--shape") {
      out.args.shape = parse_shape(command, value);
    } else if (opt == "--dtype") {
      out.args.dtype = parse_dtype(value);
      if (!out.args.dtype) {
        std::vector<std::string_view> names;
        for (DType t : kAllDTypes)
          names.push_back(name_of(t));
        throw UserError(fmt::format("tilejit {}: unknown dtype '{}'{}", command,
                                    value, did_you_mean(value, names)));
      }
    } else if (opt == "--set") {
      size_t eq = value.find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw UserError(fmt::format("tilejit {}: --set '{}' must be "
                                    "NAME=VALUE",
                                    command, value));
      std::string_view name = value.substr(0, eq);
      const auto &params = out.op->params;
      if (std::find(params.begin(), params.end(), name) == params.end())
        throw UserError(fmt::format(
            "tilejit {}: op '{}' has no parameter '{}'{}; its parameters are "
            "{}",
            command, out.op->name, name, did_you_mean(name, params),
            params.empty() ? std::string("(none)")
                           : fmt::format("{}", fmt::join(params, ", "))));
      out.args.set[std::string(name)] = std::string(value.substr(eq + 1));
    } else if (opt == "--dump") {
      out.dump = parse_stages(command, value);
    } else if (opt == "--iters") {
      out.iters = static_cast<int>(parse_int(command, "--iters", value));
    }
  }
  return out;
}

} // namespace tilejit::cli
