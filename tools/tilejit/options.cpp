// options.cpp - Parsing of --shape, --dtype, --set, --dump, --timings,
// --iters and --kernel, strict and typed by the op's declaration.
#include "options.h"

#include "suggest.h"

#include "tilejit/error.h"

#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

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

static DType parse_dtype_name(std::string_view command, std::string_view text) {
  if (std::optional<DType> d = parse_dtype(text))
    return *d;
  std::vector<std::string_view> names;
  for (DType t : kAllDTypes)
    names.push_back(name_of(t));
  throw UserError(fmt::format("tilejit {}: unknown dtype '{}'{}", command, text,
                              did_you_mean(text, names)));
}

/// The names `--set` takes: the op's parameters, then its --shape dims.
static std::vector<std::string> set_names(const ops::OpDef &op) {
  std::vector<std::string> names;
  for (const ops::ParamDecl &p : op.params)
    names.push_back(p.name);
  for (const std::string &item : ops::shape_items(op.cli_shape))
    if (item != "*" &&
        std::find(names.begin(), names.end(), item) == names.end())
      names.push_back(item);
  for (const std::string &dim : ops::optional_dims(op))
    names.push_back(dim); // --set C=33 with the tensor that has it
  for (const std::string &dim : ops::derivable_dims(op))
    if (std::find(names.begin(), names.end(), dim) == names.end())
      names.push_back(dim); // --set L=4096 instead of the derived size
  for (const ops::TensorDecl &t : op.tensors)
    if (t.optional) // --set NAME=none
      names.push_back(t.name);
  return names;
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
  for (const ops::OpDef *op : ops::all_ops())
    op_names.push_back(op->name);
  out.op = ops::find_op(argv[0]);
  if (!out.op)
    throw UserError(fmt::format("tilejit {}: unknown op '{}'{}", command,
                                argv[0], did_you_mean(argv[0], op_names)));

  std::set<std::string_view> seen;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view opt = argv[i], value;
    bool has_value = false;
    if (size_t eq = opt.find('='); opt.starts_with("--") && eq != opt.npos &&
                                   opt.substr(0, eq) != "--set" &&
                                   opt.substr(0, eq) != "--dtype") {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      has_value = true;
    }
    if (std::find(allowed.begin(), allowed.end(), opt) == allowed.end())
      throw UserError(fmt::format("tilejit {}: unknown option '{}'{}", command,
                                  opt, did_you_mean(opt, allowed)));
    if (opt != "--set" && opt != "--dtype" && !seen.insert(opt).second)
      throw UserError(
          fmt::format("tilejit {}: option {} is given twice", command, opt));
    if (opt == "--timings") {
      if (!has_value || value == "1" || value == "true")
        out.timings = true;
      else if (value != "0" && value != "false")
        throw UserError(fmt::format("tilejit {}: --timings={} is not a bool; "
                                    "requires --timings, or =1, =0, =true, "
                                    "=false",
                                    command, value));
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argv.size())
        throw UserError(
            fmt::format("tilejit {}: option {} needs a value", command, opt));
      value = argv[++i];
    }
    if (opt == "--shape") {
      out.c.shape = parse_shape(command, value);
    } else if (opt == "--dtype") {
      size_t eq = value.find('=');
      std::string name =
          eq == std::string_view::npos ? "" : std::string(value.substr(0, eq));
      DType dtype = parse_dtype_name(
          command, eq == std::string_view::npos ? value : value.substr(eq + 1));
      if (!out.c.dtypes.emplace(name, dtype).second)
        throw UserError(
            fmt::format("tilejit {}: --dtype {} is given twice", command,
                        name.empty() ? "(of the first input)" : name));
    } else if (opt == "--set") {
      size_t eq = value.find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw UserError(fmt::format("tilejit {}: --set '{}' must be "
                                    "NAME=VALUE",
                                    command, value));
      std::string_view name = value.substr(0, eq);
      const std::vector<std::string> names = set_names(*out.op);
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::vector<std::string_view> views(names.begin(), names.end());
        throw UserError(fmt::format(
            "tilejit {}: op '{}' has no parameter '{}'{}; its parameters are "
            "{}",
            command, out.op->name, name, did_you_mean(name, views),
            names.empty() ? std::string("(none)")
                          : fmt::format("{}", fmt::join(names, ", "))));
      }
      if (!out.c.set.emplace(name, value.substr(eq + 1)).second)
        throw UserError(
            fmt::format("tilejit {}: --set {} is given twice", command, name));
    } else if (opt == "--dump") {
      out.dump = parse_stages(command, value);
    } else if (opt == "--iters") {
      const int64_t iters = parse_int(command, "--iters", value);
      if (iters < 1 || iters > 1000000)
        throw UserError(fmt::format("tilejit {}: --iters {} is out of range; "
                                    "requires 1 to 1000000",
                                    command, value));
      out.iters = static_cast<int>(iters);
    } else if (opt == "--seed") {
      out.seed = static_cast<uint64_t>(parse_int(command, "--seed", value));
    } else if (opt == "--kernel") {
      const int64_t kernel = parse_int(command, "--kernel", value);
      if (kernel < 0 || kernel >= out.op->kernel_count)
        throw UserError(fmt::format(
            "tilejit {}: --kernel {} is out of range; {} has {}, requires "
            "0{}",
            command, value, out.op->name,
            out.op->kernel_count == 1
                ? std::string("one kernel")
                : fmt::format("{} kernels", out.op->kernel_count),
            out.op->kernel_count == 1
                ? std::string()
                : fmt::format(" to {}", out.op->kernel_count - 1)));
      out.kernel = static_cast<int>(kernel);
    }
  }
  out.resolved = harness::resolve(*out.op, out.c);
  // The tensors' own checks too (a shape the op does not take), before
  // anything needs a GPU.
  std::vector<rt::TensorView> views;
  (void)harness::bind_for_compile(out.resolved, views);
  return out;
}

rt::SpecKey key_of(const OpCommand &cmd, int kernel) {
  std::vector<rt::TensorView> views;
  return cmd.op->key(harness::bind_for_compile(cmd.resolved, views),
                     kernel < 0 ? cmd.kernel : kernel);
}

Kernel kernel_of(const OpCommand &cmd, int kernel) {
  std::vector<rt::TensorView> views;
  return cmd.op->kernel(harness::bind_for_compile(cmd.resolved, views),
                        kernel < 0 ? cmd.kernel : kernel);
}

static std::string_view layout_text(ops::Layout l) {
  switch (l) {
  case ops::Layout::strided:
    return "any strides";
  case ops::Layout::inner_contiguous:
    return "unit inner stride";
  case ops::Layout::contiguous:
    return "contiguous";
  case ops::Layout::as_shaped:
    return "strides as laid out (outer ones may be larger)";
  }
  return "?";
}

std::string op_help(const ops::OpDef &op) {
  std::string out = fmt::format("{} - {}\n\n", op.name, op.summary);
  out += "tensors:\n";
  size_t name_width = 8;
  for (const ops::TensorDecl &t : op.tensors)
    name_width = std::max(name_width, t.name.size());
  for (const ops::TensorDecl &t : op.tensors) {
    std::string dtypes;
    if (t.dtypes.empty())
      dtypes = fmt::format("dtype of {}", t.same_dtype_as);
    else
      for (DType d : t.dtypes)
        dtypes += fmt::format("{}{}", dtypes.empty() ? "" : "|", name_of(d));
    out += fmt::format(
        "  {:<7} {:<{}} {:<32} [{}] {}{}{}\n",
        t.output ? (t.optional ? "output?" : "output")
                 : (t.optional ? "input?" : "input"),
        t.name, name_width, dtypes,
        t.shape.empty() ? "laid out by the op" : t.shape, layout_text(t.layout),
        t.doc.empty() ? "" : "; " + t.doc,
        t.optional && !t.passed_by_default ? "; left out by default" : "");
  }
  auto any_optional = [&](bool output) {
    return std::any_of(op.tensors.begin(), op.tensors.end(),
                       [&](const ops::TensorDecl &t) {
                         return t.optional && t.output == output;
                       });
  };
  if (any_optional(false) || any_optional(true))
    out += fmt::format("  ({}: optional; --set NAME=none leaves it out, --set "
                       "NAME=passed passes it)\n",
                       any_optional(false) && any_optional(true)
                           ? "input?, output?"
                           : (any_optional(true) ? "output?" : "input?"));
  out += "parameters (--set NAME=VALUE):\n";
  if (op.params.empty())
    out += "  (none)\n";
  for (const ops::ParamDecl &p : op.params) {
    std::string type;
    switch (p.type) {
    case ops::ParamDecl::Type::boolean:
      type = "bool";
      break;
    case ops::ParamDecl::Type::integer:
      type = fmt::format("int {}..{}", p.min, p.max);
      break;
    case ops::ParamDecl::Type::real:
      type = "real";
      break;
    case ops::ParamDecl::Type::choice:
      type = fmt::format("{}", fmt::join(p.choices, "|"));
      break;
    }
    out += fmt::format("  {:<29} {:<16} default {}; {}\n", p.name, type,
                       ops::param_text(p.default_value), p.doc);
  }
  for (const ops::DimRule &r : op.dim_rules) {
    out += fmt::format("  requires {}", r.dim);
    if (r.max != std::numeric_limits<int64_t>::max())
      out += fmt::format(" in {}..{}", r.min, r.max);
    if (r.multiple > 1)
      out += fmt::format(" a multiple of {}", r.multiple);
    out += "\n";
  }
  out += fmt::format("--shape {} (default {})\n", op.cli_shape,
                     fmt::join(op.default_shape, "x"));
  return out;
}

} // namespace tilejit::cli
