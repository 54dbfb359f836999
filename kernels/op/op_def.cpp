// op_def.cpp - Declarations, the validation every op call gets from its
// declaration, and the registry of ops by name.
#include "op/op_def.h"

#include "common/check.h"

#include "tilejit/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <mutex>
#include <optional>

namespace tilejit::ops {

// --- declarations ----------------------------------------------------------

ParamDecl flag(std::string name, bool fallback, std::string doc) {
  return {.name = std::move(name),
          .type = ParamDecl::Type::boolean,
          .default_value = fallback,
          .doc = std::move(doc)};
}

ParamDecl integer(std::string name, int64_t fallback, int64_t min, int64_t max,
                  std::string doc) {
  return {.name = std::move(name),
          .type = ParamDecl::Type::integer,
          .default_value = fallback,
          .min = min,
          .max = max,
          .doc = std::move(doc)};
}

ParamDecl real(std::string name, double fallback, double min, std::string doc) {
  return {.name = std::move(name),
          .type = ParamDecl::Type::real,
          .default_value = fallback,
          .real_min = min,
          .doc = std::move(doc)};
}

ParamDecl choice(std::string name, std::string fallback,
                 std::vector<std::string> choices, std::string doc) {
  return {.name = std::move(name),
          .type = ParamDecl::Type::choice,
          .default_value = std::move(fallback),
          .choices = std::move(choices),
          .doc = std::move(doc)};
}

ParamDecl real(std::string name, double fallback, std::string doc) {
  return real(std::move(name), fallback,
              -std::numeric_limits<double>::infinity(), std::move(doc));
}

static TensorDecl tensor_decl(std::string name, bool output,
                              std::vector<DType> dtypes, std::string like,
                              std::string shape, Layout layout,
                              std::string doc) {
  TensorDecl t;
  t.name = std::move(name);
  t.output = output;
  t.dtypes = std::move(dtypes);
  t.same_dtype_as = std::move(like);
  t.shape = std::move(shape);
  t.layout = layout;
  t.doc = std::move(doc);
  return t;
}

TensorDecl input(std::string name, std::vector<DType> dtypes, std::string shape,
                 Layout layout, std::string doc) {
  return tensor_decl(std::move(name), false, std::move(dtypes), "",
                     std::move(shape), layout, std::move(doc));
}
TensorDecl output(std::string name, std::vector<DType> dtypes,
                  std::string shape, Layout layout, std::string doc) {
  return tensor_decl(std::move(name), true, std::move(dtypes), "",
                     std::move(shape), layout, std::move(doc));
}
TensorDecl optional_input(std::string name, std::vector<DType> dtypes,
                          std::string shape, Layout layout, std::string doc) {
  TensorDecl t = input(std::move(name), std::move(dtypes), std::move(shape),
                       layout, std::move(doc));
  t.optional = true;
  return t;
}

TensorDecl optional_output(std::string name, std::vector<DType> dtypes,
                           std::string shape, Layout layout, std::string doc) {
  TensorDecl t = output(std::move(name), std::move(dtypes), std::move(shape),
                        layout, std::move(doc));
  t.optional = true;
  return t;
}

TensorDecl absent_by_default(TensorDecl t) {
  t.passed_by_default = false;
  return t;
}

TensorDecl input_like(std::string name, std::string like, std::string shape,
                      Layout layout, std::string doc) {
  return tensor_decl(std::move(name), false, {}, std::move(like),
                     std::move(shape), layout, std::move(doc));
}
TensorDecl output_like(std::string name, std::string like, std::string shape,
                       Layout layout, std::string doc) {
  return tensor_decl(std::move(name), true, {}, std::move(like),
                     std::move(shape), layout, std::move(doc));
}

int OpDef::tensor_index(std::string_view tensor) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == tensor)
      return static_cast<int>(i);
  return -1;
}

int OpDef::param_index(std::string_view param) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == param)
      return static_cast<int>(i);
  return -1;
}

const TensorDecl *OpDef::find_tensor(std::string_view tensor) const {
  int i = tensor_index(tensor);
  return i < 0 ? nullptr : &tensors[i];
}

const ParamDecl *OpDef::find_param(std::string_view param) const {
  int i = param_index(param);
  return i < 0 ? nullptr : &params[i];
}

std::vector<std::string> shape_items(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    items.emplace_back(item);
    if (comma == std::string_view::npos)
      break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

std::vector<std::string> optional_dims(const OpDef &op) {
  const std::vector<std::string> cli = shape_items(op.cli_shape);
  auto named = [&](const std::string &item) {
    return item != "*" && !std::isdigit(static_cast<unsigned char>(item[0])) &&
           op.find_param(item) == nullptr &&
           std::find(cli.begin(), cli.end(), item) == cli.end();
  };
  std::vector<std::string> required, optional;
  for (const TensorDecl &t : op.tensors)
    for (const std::string &item : shape_items(t.shape))
      if (named(item))
        (t.optional ? optional : required).push_back(item);
  std::vector<std::string> dims;
  for (const std::string &d : optional)
    if (std::find(required.begin(), required.end(), d) == required.end() &&
        std::find(dims.begin(), dims.end(), d) == dims.end())
      dims.push_back(d);
  return dims;
}

void OpDef::prepare() {
  shapes.clear();
  for (const TensorDecl &t : tensors) {
    std::vector<ShapeItem> items;
    for (const std::string &item : shape_items(t.shape)) {
      ShapeItem s{ShapeItem::Kind::name, item, 0};
      int64_t n = 0;
      auto [end, ec] =
          std::from_chars(item.data(), item.data() + item.size(), n);
      if (item == "*")
        s.kind = ShapeItem::Kind::rest;
      else if (ec == std::errc() && end == item.data() + item.size())
        s = {ShapeItem::Kind::size, "", n};
      else if (const ParamDecl *p = find_param(item);
               p && p->type == ParamDecl::Type::integer)
        s.kind = ShapeItem::Kind::param;
      else if (!is_identifier(item))
        throw InternalError(fmt::format("internal error: op {}: tensor '{}' "
                                        "has shape '{}'",
                                        name, t.name, t.shape));
      items.push_back(std::move(s));
    }
    shapes.push_back(std::move(items));
    if (t.dtypes.empty() && tensor_index(t.same_dtype_as) < 0)
      throw InternalError(fmt::format("internal error: op {}: tensor '{}' "
                                      "has no dtype",
                                      name, t.name));
  }
}

// --- a call ----------------------------------------------------------------

namespace {

std::string shape_text(const rt::TensorView &t) {
  return fmt::format("[{}]",
                     fmt::join(std::span(t.shape.data(), t.rank), ", "));
}

/// The op's optional inputs, "'a' or 'b'", or "no argument".
static std::string optional_names(const OpDef &op) {
  std::vector<std::string> names;
  for (const TensorDecl &t : op.tensors)
    if (t.optional)
      names.push_back(fmt::format("'{}'", t.name));
  return names.empty() ? std::string("no argument") : one_of(names);
}

std::string dtype_list(const std::vector<DType> &dtypes) {
  std::vector<std::string> names;
  for (DType d : dtypes)
    names.emplace_back(name_of(d));
  return one_of(names);
}

} // namespace

Call::Call(const OpDef &op, std::span<const rt::TensorView> tensors,
           std::span<const ParamValue> params)
    : op_(&op), tensors_(tensors), params_(params) {
  validate(false);
}

Call::Call(const OpDef &op, std::span<const rt::TensorView> tensors,
           std::span<const ParamValue> params, InputsOnly)
    : op_(&op), tensors_(tensors), params_(params) {
  validate(true);
}

void Call::validate(bool inputs_only) {
  const OpDef &op = *op_;
  std::span<const rt::TensorView> tensors = tensors_;
  std::span<const ParamValue> params = params_;
  if (tensors.size() != op.tensors.size() ||
      params.size() != op.params.size() ||
      op.shapes.size() != op.tensors.size())
    throw InternalError(fmt::format("internal error: {} called with {} "
                                    "tensors and {} parameters; it declares "
                                    "{} and {}",
                                    op.name, tensors.size(), params.size(),
                                    op.tensors.size(), op.params.size()));
  for (size_t i = 0; i < params.size(); ++i)
    check_param(op, op.params[i], params[i]);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDecl &d = op.tensors[i];
    const rt::TensorView &t = tensors[i];
    if (is_absent(t)) {
      if (d.optional || (inputs_only && d.output))
        continue;
      throw UserError(fmt::format("{}: argument '{}' is absent; requires a "
                                  "tensor (only {} may be left out)",
                                  op.name, d.name, optional_names(op)));
    }
    if (!d.dtypes.empty()) {
      if (std::find(d.dtypes.begin(), d.dtypes.end(), t.dtype) ==
          d.dtypes.end())
        throw UserError(fmt::format("{}: argument '{}' has dtype {}; requires "
                                    "{}",
                                    op.name, d.name, name_of(t.dtype),
                                    dtype_list(d.dtypes)));
    } else {
      const rt::TensorView &like = tensors[op.tensor_index(d.same_dtype_as)];
      if (t.dtype != like.dtype)
        throw UserError(fmt::format("{}: argument '{}' has dtype {}; requires "
                                    "{}, the dtype of '{}'",
                                    op.name, d.name, name_of(t.dtype),
                                    name_of(like.dtype), d.same_dtype_as));
    }
  }
  bind_dims();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDecl &d = op.tensors[i];
    const rt::TensorView &t = tensors[i];
    if (is_absent(t))
      continue;
    if (d.layout == Layout::contiguous && !t.is_contiguous())
      throw UserError(fmt::format("{}: argument '{}' is {}; requires a "
                                  "contiguous tensor",
                                  op.name, d.name, t.to_string()));
    if (d.layout == Layout::inner_contiguous && t.rank > 0 &&
        t.shape[t.rank - 1] > 1 && t.strides[t.rank - 1] != 1)
      throw UserError(fmt::format("{}: argument '{}' is {}; requires "
                                  "stride[{}] = 1",
                                  op.name, d.name, t.to_string(), t.rank - 1));
    check_pointer(op.name, d.name, t);
  }
  auto bound = [&](const std::string &name) {
    return op.param_index(name) >= 0 || find_dim(name) != nullptr;
  };
  for (const DimRule &r : op.dim_rules) {
    // A rule names a dimension or an integer parameter.
    auto value = [&](const std::string &name) {
      return op.param_index(name) >= 0 ? integer(name) : dim(name);
    };
    if (inputs_only &&
        (!bound(r.dim) || (!r.at_most.empty() && !bound(r.at_most))))
      continue; // a dimension only an output has: the call checks it
    const int64_t v = value(r.dim);
    const int64_t bound_by = r.at_most.empty() ? v : value(r.at_most);
    if (v >= r.min && v <= r.max && v % r.multiple == 0 && v <= bound_by)
      continue;
    std::string want;
    if (r.min == r.max)
      want = fmt::format("{} = {}", r.dim, r.min);
    else if (r.max != std::numeric_limits<int64_t>::max())
      want = fmt::format("{} <= {} <= {}", r.min, r.dim, r.max);
    else if (r.min > 0)
      want = fmt::format("{} >= {}", r.dim, r.min);
    if (r.multiple > 1)
      want += fmt::format("{}{} a multiple of {}", want.empty() ? "" : " and ",
                          r.dim, r.multiple);
    if (!r.at_most.empty())
      want += fmt::format("{}{} <= {} = {}", want.empty() ? "" : " and ", r.dim,
                          r.at_most, bound_by);
    if (op.param_index(r.dim) >= 0)
      throw UserError(fmt::format("{}: argument '{}' is {}; requires {}",
                                  op.name, r.dim, v, want));
    const Dim *bound = find_dim(r.dim);
    throw UserError(
        fmt::format("{}: argument '{}' has shape {} ({} = {}); requires {}",
                    op.name, op.tensors[bound->tensor].name,
                    shape_text(tensors[bound->tensor]), r.dim, v, want));
  }
  if (inputs_only)
    return;
  if (op.check)
    op.check(*this);
  check_shaped();
}

/// Tensors declared without a shape, against what shape_of lays out.
void Call::check_shaped() const {
  const OpDef &op = *op_;
  DimPairs dims;
  std::array<DType, KernelArgs::kMax> dtypes{};
  std::optional<ShapeArgs> args;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorDecl &d = op.tensors[i];
    if (!d.shape.empty() || is_absent(tensors_[i]))
      continue;
    if (!op.shape_of)
      throw InternalError(fmt::format("internal error: {}: tensor '{}' has no "
                                      "shape and the op no shape_of",
                                      op.name, d.name));
    if (!args) {
      if (tensors_.size() > dtypes.size())
        throw InternalError(fmt::format("internal error: {} has {} tensors; "
                                        "at most {} are supported",
                                        op.name, tensors_.size(),
                                        dtypes.size()));
      for (size_t t = 0; t < tensors_.size(); ++t)
        dtypes[t] = tensors_[t].dtype;
      args = ShapeArgs{&op, dim_pairs(dims), params_,
                       std::span(dtypes.data(), tensors_.size())};
    }
    const TensorShape want = op.shape_of(d.name, *args);
    const rt::TensorView &t = tensors_[i];
    const size_t rank = want.shape.size();
    const bool as_shaped = d.layout == Layout::as_shaped;
    bool ok = t.dtype == want.dtype && t.rank == static_cast<int>(rank) &&
              std::equal(want.shape.begin(), want.shape.end(), t.shape.begin());
    for (size_t a = 0; ok && as_shaped && a < rank; ++a)
      if (want.shape[a] > 1)
        ok = want.strides[a] == 1 ? t.strides[a] == 1
                                  : t.strides[a] >= want.strides[a];
    if (ok)
      continue;
    std::string text =
        fmt::format("{}[{}]", name_of(want.dtype), fmt::join(want.shape, ", "));
    if (as_shaped) {
      std::vector<std::string> strides;
      for (int64_t s : want.strides)
        strides.push_back(s == 1 ? "1" : fmt::format(">= {}", s));
      text += fmt::format(" strides [{}]", fmt::join(strides, ", "));
    }
    throw UserError(fmt::format("{}: argument '{}' is {}; requires {}", op.name,
                                d.name, t.to_string(), text));
  }
}

void Call::bind_dims() {
  const OpDef &op = *op_;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto &items = op.shapes[i];
    if (items.empty() && op.tensors[i].shape.empty())
      continue; // the op's check looks at it
    const rt::TensorView &t = tensors_[i];
    if (is_absent(t))
      continue;
    const bool rest = std::any_of(items.begin(), items.end(), [](auto &s) {
      return s.kind == OpDef::ShapeItem::Kind::rest;
    });
    const int fixed = static_cast<int>(items.size()) - (rest ? 1 : 0);
    // What the declaration asks for, with the sizes known so far.
    auto wanted = [&] {
      std::vector<std::string> parts;
      bool all_known = true;
      std::vector<std::string> values, known;
      for (const auto &s : items) {
        parts.push_back(s.kind == OpDef::ShapeItem::Kind::size
                            ? std::to_string(s.size)
                            : (s.kind == OpDef::ShapeItem::Kind::rest
                                   ? std::string("...")
                                   : s.name));
        if (s.kind == OpDef::ShapeItem::Kind::size)
          values.push_back(std::to_string(s.size));
        else if (s.kind == OpDef::ShapeItem::Kind::param)
          values.push_back(std::to_string(integer(s.name)));
        else if (s.kind == OpDef::ShapeItem::Kind::name) {
          if (const Dim *d = find_dim(s.name)) {
            values.push_back(std::to_string(d->value));
            known.push_back(fmt::format("{} = {}", s.name, d->value));
          } else {
            all_known = false;
          }
        } else if (rest_tensor_ >= 0) {
          for (int j = 0; j < rest_rank_; ++j)
            values.push_back(std::to_string(tensors_[rest_tensor_].shape[j]));
        } else {
          all_known = false;
        }
      }
      std::string text = fmt::format("[{}]", fmt::join(parts, ", "));
      if (all_known && !values.empty() && values != parts)
        text += fmt::format(" = [{}]", fmt::join(values, ", "));
      else if (!all_known && !known.empty()) // the sizes bound so far
        text += fmt::format(" with {}", fmt::join(known, ", "));
      return text;
    };
    if (rest ? t.rank < fixed : t.rank != fixed)
      throw UserError(fmt::format("{}: argument '{}' has shape {} (rank {}); "
                                  "requires {}",
                                  op.name, op.tensors[i].name, shape_text(t),
                                  t.rank, wanted()));
    int axis = 0;
    for (const auto &s : items) {
      if (s.kind == OpDef::ShapeItem::Kind::rest) {
        const int n = t.rank - fixed;
        if (rest_tensor_ < 0) {
          rest_tensor_ = static_cast<int>(i);
          rest_rank_ = n;
        } else if (n != rest_rank_ ||
                   !std::equal(t.shape.begin() + axis,
                               t.shape.begin() + axis + n,
                               tensors_[rest_tensor_].shape.begin())) {
          throw UserError(fmt::format("{}: argument '{}' has shape {}; "
                                      "requires {}",
                                      op.name, op.tensors[i].name,
                                      shape_text(t), wanted()));
        }
        axis += n;
        continue;
      }
      const int64_t got = t.shape[axis++];
      int64_t want = -1;
      if (s.kind == OpDef::ShapeItem::Kind::size)
        want = s.size;
      else if (s.kind == OpDef::ShapeItem::Kind::param)
        want = integer(s.name);
      else {
        if (const Dim *d = find_dim(s.name))
          want = d->value;
        if (want < 0) {
          if (num_dims_ == static_cast<int>(dims_.size()))
            throw InternalError("internal error: more than 16 named dims");
          dims_[num_dims_++] = {s.name, got, static_cast<int>(i)};
          continue;
        }
      }
      if (got != want)
        throw UserError(fmt::format("{}: argument '{}' has shape {}; "
                                    "requires {}",
                                    op.name, op.tensors[i].name, shape_text(t),
                                    wanted()));
    }
  }
}

const rt::TensorView &Call::tensor(std::string_view name) const {
  int i = op_->tensor_index(name);
  if (i < 0)
    throw InternalError(
        fmt::format("internal error: {} has no tensor '{}'", op_->name, name));
  return tensors_[i];
}

bool Call::has(std::string_view name) const { return !is_absent(tensor(name)); }

void Call::bind_derived(std::string_view name, int64_t value) {
  if (find_dim(name))
    return;
  // The name as the declaration holds it (a view that outlives the call).
  for (size_t i = 0; i < op_->shapes.size(); ++i)
    for (const OpDef::ShapeItem &s : op_->shapes[i])
      if (s.kind == OpDef::ShapeItem::Kind::name && s.name == name) {
        if (num_dims_ == static_cast<int>(dims_.size()))
          throw InternalError("internal error: more than 16 named dims");
        dims_[num_dims_++] = {s.name, value, static_cast<int>(i)};
        return;
      }
  throw InternalError(fmt::format("internal error: {}: dims_from_inputs gives "
                                  "'{}', which no declared shape has",
                                  op_->name, name));
}

const Call::Dim *Call::find_dim(std::string_view name) const {
  for (int j = 0; j < num_dims_; ++j)
    if (dims_[j].name == name)
      return &dims_[j];
  return nullptr;
}

std::span<const std::pair<std::string_view, int64_t>>
Call::dim_pairs(DimPairs &buffer) const {
  for (int j = 0; j < num_dims_; ++j)
    buffer[static_cast<size_t>(j)] = {dims_[j].name, dims_[j].value};
  return std::span(buffer.data(), static_cast<size_t>(num_dims_));
}

int64_t Call::dim(std::string_view name) const {
  if (const Dim *d = find_dim(name))
    return d->value;
  throw InternalError(
      fmt::format("internal error: {} has no dimension '{}'", op_->name, name));
}

const ParamValue &Call::param(std::string_view name) const {
  int i = op_->param_index(name);
  if (i < 0)
    throw InternalError(fmt::format("internal error: {} has no parameter '{}'",
                                    op_->name, name));
  return params_[i];
}

template <class T>
static const T &value_as(const OpDef &op, std::string_view name,
                         const ParamValue &v) {
  if (const T *p = std::get_if<T>(&v))
    return *p;
  throw InternalError(fmt::format("internal error: {}: parameter '{}' read "
                                  "as another type",
                                  op.name, name));
}

bool Call::flag(std::string_view n) const {
  return value_as<bool>(*op_, n, param(n));
}
int64_t Call::integer(std::string_view n) const {
  return value_as<int64_t>(*op_, n, param(n));
}
double Call::real(std::string_view n) const {
  return value_as<double>(*op_, n, param(n));
}
const std::string &Call::choice(std::string_view n) const {
  return value_as<std::string>(*op_, n, param(n));
}

// --- the host call of a reference -------------------------------------------

static const ParamValue &host_param(const HostCall &c, std::string_view n) {
  int i = c.op->param_index(n);
  if (i < 0)
    throw InternalError(
        fmt::format("internal error: {} has no parameter '{}'", c.op->name, n));
  return c.params[i];
}

int OpDef::index_among(std::string_view tensor, bool outputs) const {
  int index = 0;
  for (const TensorDecl &t : tensors) {
    if (t.output != outputs)
      continue;
    if (t.name == tensor)
      return index;
    ++index;
  }
  throw InternalError(fmt::format("internal error: {} has no {} '{}'", name,
                                  outputs ? "output" : "input", tensor));
}

const ref::HostTensor &HostCall::tensor(std::string_view name) const {
  return inputs.at(op->index_among(name, false));
}

bool HostCall::has(std::string_view name) const {
  if (const TensorDecl *t = op->find_tensor(name); t && t->output) {
    const int i = op->index_among(name, true);
    return !(i < static_cast<int>(absent_outputs.size()) && absent_outputs[i]);
  }
  return tensor(name).rank() > 0 || tensor(name).raw() != nullptr;
}

std::optional<ref::HostTensor> HostCall::given(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  return tensor(name);
}

const TensorShape &HostCall::output(std::string_view name) const {
  return outputs.at(op->index_among(name, true));
}

bool HostCall::flag(std::string_view n) const {
  return value_as<bool>(*op, n, host_param(*this, n));
}
int64_t HostCall::integer(std::string_view n) const {
  return value_as<int64_t>(*op, n, host_param(*this, n));
}
double HostCall::real(std::string_view n) const {
  return value_as<double>(*op, n, host_param(*this, n));
}
const std::string &HostCall::choice(std::string_view n) const {
  return value_as<std::string>(*op, n, host_param(*this, n));
}

std::string one_of(std::span<const std::string> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      out +=
          i + 1 == items.size() ? (items.size() > 2 ? ", or " : " or ") : ", ";
    out += items[i];
  }
  return out;
}

// --- the arguments of an output's shape -------------------------------------

int64_t ShapeArgs::dim(std::string_view name) const {
  for (const auto &[n, v] : dims)
    if (n == name)
      return v;
  throw InternalError(
      fmt::format("internal error: {} has no dimension '{}'", op->name, name));
}
static const ParamValue &shape_param(const ShapeArgs &a, std::string_view n) {
  int i = a.op->param_index(n);
  if (i < 0)
    throw InternalError(
        fmt::format("internal error: {} has no parameter '{}'", a.op->name, n));
  return a.params[i];
}
bool ShapeArgs::flag(std::string_view n) const {
  return value_as<bool>(*op, n, shape_param(*this, n));
}
int64_t ShapeArgs::integer(std::string_view n) const {
  return value_as<int64_t>(*op, n, shape_param(*this, n));
}
const std::string &ShapeArgs::choice(std::string_view n) const {
  return value_as<std::string>(*op, n, shape_param(*this, n));
}
DType ShapeArgs::dtype(std::string_view tensor) const {
  const int i = op->tensor_index(tensor);
  if (i < 0 || static_cast<size_t>(i) >= dtypes.size())
    throw InternalError(
        fmt::format("internal error: {} has no tensor '{}'", op->name, tensor));
  return dtypes[static_cast<size_t>(i)];
}

// --- calling an op ----------------------------------------------------------

Call OpDef::bind(std::span<const rt::TensorView> t,
                 std::span<const ParamValue> p) const {
  return Call(*this, t, p);
}

std::vector<TensorShape>
OpDef::output_layouts(std::span<const rt::TensorView> t,
                      std::span<const ParamValue> p) const {
  Call c(*this, t, p, Call::InputsOnly{});
  if (dims_from_inputs)
    for (const auto &[dim, value] : dims_from_inputs(c))
      c.bind_derived(dim, value);
  std::vector<DType> dtypes(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDecl &d = tensors[i];
    if (!is_absent(t[i]))
      dtypes[i] = t[i].dtype;
    else if (!d.dtypes.empty())
      dtypes[i] = d.dtypes.front();
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    if (is_absent(t[i]) && tensors[i].dtypes.empty())
      dtypes[i] = dtypes[tensor_index(tensors[i].same_dtype_as)];
  Call::DimPairs dims;
  const ShapeArgs args{this, c.dim_pairs(dims), p, dtypes};
  std::vector<TensorShape> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDecl &d = tensors[i];
    if (!d.output)
      continue;
    if (d.shape.empty()) {
      if (!shape_of)
        throw InternalError(fmt::format("internal error: {}: tensor '{}' has "
                                        "no shape and the op no shape_of",
                                        name, d.name));
      out.push_back(shape_of(d.name, args));
      continue;
    }
    TensorShape layout{.dtype = dtypes[i]};
    for (const ShapeItem &s : shapes[i]) {
      switch (s.kind) {
      case ShapeItem::Kind::size:
        layout.shape.push_back(s.size);
        break;
      case ShapeItem::Kind::param:
        layout.shape.push_back(c.integer(s.name));
        break;
      case ShapeItem::Kind::rest:
        if (c.rest_tensor_ < 0)
          throw UserError(fmt::format("{}: output '{}' has leading "
                                      "dimensions no input gives",
                                      name, d.name));
        for (int j = 0; j < c.rest_rank_; ++j)
          layout.shape.push_back(t[c.rest_tensor_].shape[j]);
        break;
      case ShapeItem::Kind::name: {
        const Call::Dim *bound = c.find_dim(s.name);
        if (!bound)
          throw UserError(fmt::format("{}: output '{}' has dimension {}, "
                                      "which no input gives",
                                      name, d.name, s.name));
        layout.shape.push_back(bound->value);
        break;
      }
      }
    }
    layout.strides = ref::contiguous_strides(layout.shape);
    out.push_back(std::move(layout));
  }
  return out;
}

void OpDef::call(std::span<const rt::TensorView> t,
                 std::span<const ParamValue> p, CUstream stream) const {
  run(Call(*this, t, p), stream);
}

// --- the registry ------------------------------------------------------------

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::string, const OpDef &(*)()> getters;
};
Registry &registry() {
  static Registry r;
  return r;
}
} // namespace

OpRegistrar::OpRegistrar(const OpDef &(*get)()) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.getters[get().name] = get;
}

std::vector<const OpDef *> all_ops() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const OpDef *> out;
  for (const auto &[name, get] : r.getters)
    out.push_back(&get());
  return out;
}

const OpDef *find_op(std::string_view name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.getters.find(std::string(name));
  return it == r.getters.end() ? nullptr : &it->second();
}

} // namespace tilejit::ops
