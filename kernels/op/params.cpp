// params.cpp - Static parameters: their text, strict parsing from the
// command line, the range checks of every call, and their defaults.
#include "op/op_def.h"

#include "tilejit/error.h"

#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::ops {

std::string param_text(const ParamValue &value) {
  if (const bool *b = std::get_if<bool>(&value))
    return *b ? "true" : "false";
  if (const int64_t *n = std::get_if<int64_t>(&value))
    return std::to_string(*n);
  if (const double *d = std::get_if<double>(&value))
    return fmt::format("{}", *d);
  return std::get<std::string>(value);
}

/// "1 to 1024", ">= 1", or "any integer".
static std::string range_text(const ParamDecl &p) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(),
                    hi = std::numeric_limits<int64_t>::max();
  if (p.min != lo && p.max != hi)
    return fmt::format("{} to {}", p.min, p.max);
  if (p.min != lo)
    return fmt::format(">= {}", p.min);
  if (p.max != hi)
    return fmt::format("<= {}", p.max);
  return "any integer";
}

/// " >= 0", or "" for any finite value.
static std::string real_range(const ParamDecl &p) {
  return std::isfinite(p.real_min) ? fmt::format(" >= {}", p.real_min) : "";
}

static std::string type_text(ParamDecl::Type t) {
  switch (t) {
  case ParamDecl::Type::boolean:
    return "bool";
  case ParamDecl::Type::integer:
    return "integer";
  case ParamDecl::Type::real:
    return "real";
  case ParamDecl::Type::choice:
    return "string";
  }
  return "?";
}

void check_param(const OpDef &op, const ParamDecl &p, const ParamValue &v) {
  const bool typed =
      (p.type == ParamDecl::Type::boolean && std::holds_alternative<bool>(v)) ||
      (p.type == ParamDecl::Type::integer &&
       std::holds_alternative<int64_t>(v)) ||
      (p.type == ParamDecl::Type::real && std::holds_alternative<double>(v)) ||
      (p.type == ParamDecl::Type::choice &&
       std::holds_alternative<std::string>(v));
  if (!typed)
    throw InternalError(fmt::format("internal error: {}: parameter '{}' "
                                    "given a value of another type than "
                                    "its {}",
                                    op.name, p.name, type_text(p.type)));
  if (const int64_t *n = std::get_if<int64_t>(&v);
      n && (*n < p.min || *n > p.max))
    throw UserError(fmt::format("{}: argument '{}' is {}; requires {}", op.name,
                                p.name, *n, range_text(p)));
  if (const double *d = std::get_if<double>(&v);
      d && (!std::isfinite(*d) || *d < p.real_min))
    throw UserError(fmt::format("{}: argument '{}' is {}; requires a finite "
                                "value{}",
                                op.name, p.name, *d, real_range(p)));
  if (const std::string *s = std::get_if<std::string>(&v);
      s && std::find(p.choices.begin(), p.choices.end(), *s) == p.choices.end())
    throw UserError(fmt::format("{}: argument '{}' is '{}'; requires {}",
                                op.name, p.name, *s, one_of(p.choices)));
}

ParamValue parse_param(const OpDef &op, const ParamDecl &p,
                       std::string_view text) {
  auto bad = [&](std::string_view requirement) {
    return UserError(
        fmt::format("{}: --set {}={} {}", op.name, p.name, text, requirement));
  };
  const char *first = text.data(), *last = text.data() + text.size();
  switch (p.type) {
  case ParamDecl::Type::boolean:
    if (text == "true" || text == "1")
      return true;
    if (text == "false" || text == "0")
      return false;
    throw bad("is not a bool; requires true, false, 1 or 0");
  case ParamDecl::Type::integer: {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(first, last, n);
    if (ec == std::errc::result_out_of_range)
      throw bad(fmt::format("is out of range; requires {}", range_text(p)));
    if (ec != std::errc() || end != last)
      throw bad("is not an integer");
    if (n < p.min || n > p.max)
      throw bad(fmt::format("is out of range; requires {}", range_text(p)));
    return n;
  }
  case ParamDecl::Type::real: {
    double d = 0;
    auto [end, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || end != last || !std::isfinite(d))
      throw bad("is not a finite number");
    if (d < p.real_min)
      throw bad(fmt::format("is out of range; requires a finite value{}",
                            real_range(p)));
    return d;
  }
  case ParamDecl::Type::choice:
    for (const std::string &c : p.choices)
      if (c == text)
        return c;
    throw bad(fmt::format("is not a choice; requires {}", one_of(p.choices)));
  }
  throw bad("cannot be parsed");
}

std::vector<ParamValue>
OpDef::with_defaults(std::vector<ParamValue> leading) const {
  if (leading.size() > params.size())
    throw InternalError(fmt::format("internal error: {} given {} parameters; "
                                    "it declares {}",
                                    name, leading.size(), params.size()));
  for (size_t i = leading.size(); i < params.size(); ++i)
    leading.push_back(params[i].default_value);
  return leading;
}

} // namespace tilejit::ops
