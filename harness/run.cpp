// run.cpp - One case of an op: resolved through its declaration, inputs
// generated, the CPU reference, the GPU call, the check and the timing.
#include "run.h"

#include "cuda_expf.h"
#include "fill.h"
#include "rotation.h"

#include "common/convert.h"
#include "common/cuda_math.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <numeric>
#include <random>
#include <thread>

namespace tilejit::harness {

int64_t extent(const ops::TensorShape &t) {
  int64_t last = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 0)
      return 0;
    last += (t.shape[d] - 1) * t.strides[d];
  }
  return last + 1;
}

namespace {

int64_t numel(const ops::TensorShape &t) {
  int64_t n = 1;
  for (int64_t s : t.shape)
    n *= s;
  return n;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape) {
  return ref::contiguous_strides(shape);
}

std::string dtype_list(const std::vector<DType> &dtypes) {
  std::vector<std::string_view> names;
  for (DType d : dtypes)
    names.push_back(name_of(d));
  return fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

// --- resolving a case
// ---------------------------------------------------------

Resolved resolve(const ops::OpDef &op, const Case &c) {
  Resolved r;
  r.op = &op;
  r.test = find_test(op.name);
  r.fills = c.fills;
  // --shape binds the dimensions of the op's cli_shape.
  const std::vector<std::string> cli = ops::shape_items(op.cli_shape);
  const bool rest = std::find(cli.begin(), cli.end(), "*") != cli.end();
  const size_t fixed = cli.size() - (rest ? 1 : 0);
  const std::vector<int64_t> &shape =
      c.shape.empty() ? op.default_shape : c.shape;
  if (rest ? shape.size() < fixed : shape.size() != fixed)
    throw UserError(fmt::format("{}: --shape has {} dimensions; requires {}{} "
                                "({})",
                                op.name, shape.size(), rest ? "at least " : "",
                                fixed, op.cli_shape));
  std::map<std::string, int64_t> dims;
  std::vector<int64_t> rest_dims;
  size_t axis = 0;
  for (const std::string &item : cli) {
    if (item == "*") {
      rest_dims.assign(shape.begin() + static_cast<long>(axis),
                       shape.begin() + static_cast<long>(axis) +
                           static_cast<long>(shape.size() - fixed));
      axis += shape.size() - fixed;
      continue;
    }
    const int64_t v = shape[axis++];
    auto [it, fresh] = dims.emplace(item, v);
    if (!fresh && it->second != v)
      throw UserError(fmt::format("{}: --shape {}: {} is {} and {}; requires "
                                  "one size",
                                  op.name, fmt::join(shape, "x"), item,
                                  it->second, v));
  }
  // --set: parameters by type, and named dimensions.
  r.params.clear();
  for (const ops::ParamDecl &p : op.params)
    r.params.push_back(p.default_value);
  r.absent.clear();
  for (const ops::TensorDecl &t : op.tensors)
    r.absent.push_back(t.optional && !t.passed_by_default);
  const std::vector<std::string> optional = ops::optional_dims(op);
  // Dimensions the op derives (below), which --set may give instead.
  const std::vector<std::string> derivable = ops::derivable_dims(op);
  for (const auto &[name, text] : c.set) {
    if (int i = op.param_index(name); i >= 0) {
      r.params[i] = ops::parse_param(op, op.params[i], text);
      continue;
    }
    if (int i = op.tensor_index(name); i >= 0 && op.tensors[i].optional) {
      if (text != "none" && text != "passed")
        throw UserError(fmt::format("{}: --set {}={}: '{}' is an optional "
                                    "{}; requires --set {}=none (left "
                                    "out) or --set {}=passed",
                                    op.name, name, text, name,
                                    op.tensors[i].output ? "output" : "input",
                                    name, name));
      r.absent[i] = text == "none";
      continue;
    }
    auto dim = dims.find(name);
    // A dimension only optional tensors have, or one the op derives: set,
    // not checked against --shape.
    const bool optional_dim =
        std::find(optional.begin(), optional.end(), name) != optional.end() ||
        std::find(derivable.begin(), derivable.end(), name) != derivable.end();
    if (dim == dims.end() && optional_dim)
      dim = dims.emplace(name, 0).first;
    if (dim == dims.end())
      throw UserError(fmt::format("{}: --set {}: the op has no parameter or "
                                  "dimension '{}'",
                                  op.name, name, name));
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0)
      throw UserError(fmt::format("{}: --set {}={} is not a non-negative "
                                  "integer",
                                  op.name, name, text));
    if (!c.shape.empty() && !optional_dim && v != dim->second)
      throw UserError(fmt::format("{}: --set {}={} conflicts with --shape {} "
                                  "({} = {})",
                                  op.name, name, text, fmt::join(c.shape, "x"),
                                  name, dim->second));
    dim->second = v;
  }
  // Dimensions that follow from those (the op's derived_dims).
  if (op.derived_dims) {
    const std::vector<std::pair<std::string_view, int64_t>> given(dims.begin(),
                                                                  dims.end());
    const std::vector<std::pair<std::string, int64_t>> derived =
        op.derived_dims(ops::ShapeArgs{&op, given, r.params, {}});
    for (const auto &[name, value] : derived)
      dims.emplace(name, value);
  }
  // dtypes: --dtype (the first input), --dtype NAME=..., or the first the
  // declaration allows.
  std::vector<DType> dtypes(op.tensors.size());
  std::vector<bool> given(op.tensors.size(), false);
  for (const auto &[name, dtype] : c.dtypes) {
    int i = name.empty() ? 0 : op.tensor_index(name);
    if (i < 0)
      throw UserError(fmt::format("{}: --dtype {}=...: the op has no tensor "
                                  "'{}'",
                                  op.name, name, name));
    const ops::TensorDecl &t = op.tensors[i];
    if (!t.dtypes.empty() &&
        std::find(t.dtypes.begin(), t.dtypes.end(), dtype) == t.dtypes.end())
      throw UserError(fmt::format("{}: --dtype {}={} is not supported; "
                                  "requires {}",
                                  op.name, t.name, name_of(dtype),
                                  dtype_list(t.dtypes)));
    if (t.dtypes.empty())
      throw UserError(fmt::format("{}: --dtype {}: '{}' has the dtype of "
                                  "'{}'",
                                  op.name, t.name, t.name, t.same_dtype_as));
    dtypes[i] = dtype;
    given[i] = true;
  }
  for (size_t i = 0; i < op.tensors.size(); ++i)
    if (!given[i] && !op.tensors[i].dtypes.empty())
      dtypes[i] = op.tensors[i].dtypes.front();
  for (size_t i = 0; i < op.tensors.size(); ++i)
    if (op.tensors[i].dtypes.empty())
      dtypes[i] = dtypes[op.tensor_index(op.tensors[i].same_dtype_as)];
  // Shapes from the declaration, or the op's shape_of.
  const std::vector<std::pair<std::string_view, int64_t>> dim_views(
      dims.begin(), dims.end());
  ops::ShapeArgs args{&op, dim_views, r.params, dtypes};
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    const ops::TensorDecl &t = op.tensors[i];
    ops::TensorShape layout;
    layout.dtype = dtypes[i];
    if (r.absent[i]) {
      r.tensors.push_back(std::move(layout)); // no shape: absent
      continue;
    }
    if (t.shape.empty()) {
      if (!op.shape_of)
        throw InternalError(fmt::format("internal error: {}: tensor '{}' has "
                                        "no shape and the op no shape_of",
                                        op.name, t.name));
      layout = op.shape_of(t.name, args);
    } else {
      for (const std::string &item : ops::shape_items(t.shape)) {
        int64_t n = 0;
        auto [end, ec] =
            std::from_chars(item.data(), item.data() + item.size(), n);
        if (item == "*")
          layout.shape.insert(layout.shape.end(), rest_dims.begin(),
                              rest_dims.end());
        else if (ec == std::errc() && end == item.data() + item.size())
          layout.shape.push_back(n);
        else if (op.param_index(item) >= 0)
          layout.shape.push_back(args.integer(item));
        else if (auto d = dims.find(item); d != dims.end())
          layout.shape.push_back(d->second);
        else if (t.optional)
          throw UserError(fmt::format("{}: '{}' is passed; requires --set "
                                      "{}=SIZE (its dimension '{}' follows "
                                      "from no other tensor)",
                                      op.name, t.name, item, item));
        else
          throw InternalError(fmt::format("internal error: {}: dimension '{}' "
                                          "of '{}' follows from neither "
                                          "--shape ({}) nor a parameter",
                                          op.name, item, t.name, op.cli_shape));
      }
      layout.strides = dense_strides(layout.shape);
    }
    if (auto given = c.strides.find(t.name); given != c.strides.end()) {
      if (given->second.size() != layout.shape.size())
        throw UserError(fmt::format("{}: {} strides given for '{}' of rank "
                                    "{}",
                                    op.name, given->second.size(), t.name,
                                    layout.shape.size()));
      layout.strides = given->second;
    }
    if (auto pad = c.row_stride.find(t.name); pad != c.row_stride.end()) {
      if (layout.shape.size() < 2 || pad->second < layout.shape.back())
        throw UserError(fmt::format("{}: row stride {} of '{}' {}; requires "
                                    "at least its last dimension",
                                    op.name, pad->second, t.name,
                                    fmt::join(layout.shape, "x")));
      const size_t rows = layout.shape.size() - 2;
      layout.strides[rows] = pad->second;
      for (size_t d = rows; d-- > 0;)
        layout.strides[d] = layout.strides[d + 1] * layout.shape[d + 1];
    }
    r.tensors.push_back(std::move(layout));
  }
  r.dims = dims;
  // What was asked for, as the CLI would say it.
  std::vector<std::string> words = {fmt::format("{}", fmt::join(shape, "x"))};
  for (const auto &[name, dtype] : c.dtypes)
    words.push_back(name.empty() ? std::string(name_of(dtype))
                                 : fmt::format("{}={}", name, name_of(dtype)));
  for (const auto &[name, text] : c.set)
    words.push_back(fmt::format("{}={}", name, text));
  for (const auto &[name, stride] : c.row_stride)
    words.push_back(fmt::format("{}.row_stride={}", name, stride));
  r.label = fmt::format("{}", fmt::join(words, " "));
  return r;
}

ops::Call bind_for_compile(const Resolved &r,
                           std::vector<rt::TensorView> &storage) {
  storage.clear();
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const ops::TensorShape &t = r.tensors[i];
    if (r.absent[i]) {
      storage.push_back(ops::absent());
      continue;
    }
    storage.push_back(
        rt::TensorView::strided(static_cast<CUdeviceptr>(0x10000000) * (i + 1),
                                t.dtype, t.shape, t.strides));
  }
  return r.op->bind(storage, r.params);
}

// --- inputs and the reference
// ---------------------------------------------------

namespace {

ref::HostTensor host_tensor(const ops::TensorShape &t) {
  return ref::HostTensor::zeros_strided(t.dtype, t.shape, t.strides);
}

} // namespace

const ref::HostTensor &RunData::output(std::string_view name) const {
  return outputs.at(call.op->index_among(name, true));
}

Prepared Prepared::make(const Resolved &r, uint64_t seed, bool reference) {
  Prepared p;
  p.r_ = r;
  p.checked_ = reference;
  p.data_.seed = seed;
  p.data_.call.op = r.op;
  p.data_.call.params = r.params;
  std::mt19937_64 gen(seed);
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const ops::TensorDecl &decl = r.op->tensors[i];
    if (decl.output) {
      p.data_.call.outputs.push_back(r.tensors[i]);
      p.data_.call.absent_outputs.push_back(r.absent[i]);
      continue;
    }
    if (r.absent[i]) {
      p.data_.call.inputs.emplace_back(); // HostCall::has says no
      continue;
    }
    ref::HostTensor t = host_tensor(r.tensors[i]);
    Fill how = normal();
    // The case's fill, else the test's; by "name:dtype", else by name.
    const std::string typed =
        fmt::format("{}:{}", decl.name, name_of(r.tensors[i].dtype));
    for (const std::map<std::string, Fill> *fills :
         {&r.fills, r.test ? &r.test->fills : nullptr}) {
      if (!fills)
        continue;
      auto it = fills->find(typed);
      if (it == fills->end())
        it = fills->find(decl.name);
      if (it != fills->end()) {
        how = it->second;
        break;
      }
    }
    int64_t rows_of = 0;
    if (how.kind == Fill::Kind::row_indices ||
        how.kind == Fill::Kind::element_indices ||
        how.kind == Fill::Kind::distinct_indices ||
        how.kind == Fill::Kind::psum) {
      const int of = r.op->tensor_index(how.of);
      if (of < 0 || r.tensors[of].shape.empty())
        throw InternalError(fmt::format("internal error: {}: '{}' fills "
                                        "with indices into '{}', which "
                                        "is no tensor with rows",
                                        r.op->name, decl.name, how.of));
      rows_of = how.kind == Fill::Kind::element_indices
                    ? numel(r.tensors[of])
                    : r.tensors[of].shape[0];
    }
    if (how.kind == Fill::Kind::ids_below) {
      const int param = r.op->param_index(how.of);
      const auto dim = r.dims.find(how.of);
      const int64_t *bound = param >= 0 ? std::get_if<int64_t>(&r.params[param])
                             : dim != r.dims.end() ? &dim->second
                                                   : nullptr;
      if (!bound)
        throw InternalError(fmt::format("internal error: {}: '{}' fills "
                                        "with ids below '{}', which is no "
                                        "integer parameter or dimension",
                                        r.op->name, decl.name, how.of));
      rows_of = *bound;
    }
    if (how.kind == Fill::Kind::inverse_indices) {
      const int of = r.op->tensor_index(how.of);
      if (of < 0 || of >= static_cast<int>(i) || r.absent[of] ||
          r.op->tensors[of].output)
        throw InternalError(fmt::format("internal error: {}: '{}' fills as "
                                        "the inverse of '{}', which is no "
                                        "input before it",
                                        r.op->name, decl.name, how.of));
      inverse_fill(t, p.data_.call.inputs.at(r.op->index_among(how.of, false)));
      p.data_.call.inputs.push_back(std::move(t));
      continue;
    }
    // Padding between rows is filled too: the kernel must not read it.
    fill(t, extent(r.tensors[i]), how, gen, rows_of);
    p.data_.call.inputs.push_back(std::move(t));
  }
  if (reference && r.op->reference && !(r.test && r.test->check)) {
    // The arguments of CUDA's expf, for run() to recompute with the GPU's
    // values (common/cuda_math.h).
    ref::ExpfRecorder recorder;
    p.data_.expected = r.op->reference(p.data_.call);
    p.expf_args_ = recorder.arguments();
  }
  return p;
}

// --- on the GPU
// ------------------------------------------------------------------

RunResult Prepared::check(std::vector<ref::HostTensor> outputs) const {
  const ops::OpDef &op = *r_.op;
  RunResult result;
  result.shape = r_.label;
  result.seed = data_.seed;
  RunData data = data_;
  if (!expf_args_.empty()) {
    // The reference again with CUDA's expf where it took glibc's.
    const std::vector<float> values = cuda_expf_values(expf_args_);
    ref::ExpfValues installed(expf_args_, values);
    data.expected = op.reference(data.call);
    if (installed.misses() > 0)
      throw InternalError(fmt::format("internal error: {}: the reference's "
                                      "second pass took {} expf arguments "
                                      "its first had not",
                                      op.name, installed.misses()));
  }
  data.outputs = std::move(outputs);
  std::string diff, what;
  if (!checked_) {
    result.passed = true;
    result.check = "not checked (inputs only)";
  } else if (r_.test && r_.test->check) {
    diff = r_.test->check(data);
    what = "checked";
  } else if (data.expected.size() != data.outputs.size()) {
    throw InternalError(fmt::format("internal error: {}: the reference "
                                    "gave {} outputs; the op has {}",
                                    op.name, data.expected.size(),
                                    data.outputs.size()));
  } else {
    int j = 0;
    std::vector<std::string> whats;
    for (const ops::TensorDecl &t : op.tensors) {
      if (!t.output)
        continue;
      Compare how = exact();
      if (r_.test)
        if (auto it = r_.test->compare.find(t.name);
            it != r_.test->compare.end())
          how = it->second;
      if (r_.absent[op.tensor_index(t.name)]) {
        ++j;
        continue;
      }
      if (diff.empty()) {
        std::string d = how.fn(data.outputs[j], data.expected[j], data);
        if (!d.empty())
          diff = fmt::format("{}: {}", t.name, d);
      }
      whats.push_back(fmt::format("{} {}", t.name, how.what));
      ++j;
    }
    what = fmt::format("{}", fmt::join(whats, ", "));
  }
  if (checked_) {
    result.passed = diff.empty();
    result.check = result.passed
                       ? fmt::format("{} against the CPU reference{}", what,
                                     expf_args_.empty()
                                         ? ""
                                         : " (with CUDA's expf from the GPU)")
                       : diff;
  }
  if (r_.test && r_.test->flops)
    result.flops = r_.test->flops(data.call);
  return result;
}

RunResult Prepared::run(const RunOptions &options) const {
  const ops::OpDef &op = *r_.op;
  std::vector<rt::DeviceBuffer> buffers;
  std::vector<rt::TensorView> views;
  RunResult result;
  result.shape = r_.label;
  result.seed = data_.seed;
  int input = 0;
  for (size_t i = 0; i < r_.tensors.size(); ++i) {
    const ops::TensorShape &t = r_.tensors[i];
    if (r_.absent[i]) {
      buffers.emplace_back(1); // keeps buffers[i] the i-th tensor's
      views.push_back(ops::absent());
      ++input;
      continue;
    }
    const size_t bytes = static_cast<size_t>(extent(t)) * size_of(t.dtype);
    buffers.emplace_back(std::max<size_t>(bytes, 1));
    if (op.tensors[i].output) {
      buffers.back().fill_bytes(r_.test && r_.test->poison_outputs ? 0xff : 0);
    } else if (bytes > 0) {
      buffers.back().upload(data_.call.inputs[input].raw(), bytes);
    }
    input += op.tensors[i].output ? 0 : 1;
    views.push_back(rt::TensorView::strided(buffers.back().ptr(), t.dtype,
                                            t.shape, t.strides));
    result.bytes += static_cast<double>(numel(t) * size_of(t.dtype));
  }
  op.call(views, r_.params, nullptr);
  rt::synchronize(nullptr);

  std::vector<ref::HostTensor> outputs;
  for (size_t i = 0; i < r_.tensors.size(); ++i) {
    if (!op.tensors[i].output)
      continue;
    if (r_.absent[i]) { // an optional output left out
      outputs.emplace_back();
      continue;
    }
    ref::HostTensor got = host_tensor(r_.tensors[i]);
    const size_t bytes =
        static_cast<size_t>(extent(r_.tensors[i])) * size_of(got.dtype());
    if (bytes > 0)
      buffers[i].download(got.raw(), bytes);
    outputs.push_back(std::move(got));
  }
  const RunResult checked = check(std::move(outputs));
  result.check = checked.check;
  result.passed = checked.passed;
  result.flops = checked.flops;

  if (options.iters > 0 && result.bytes > 0) {
    if (r_.test && r_.test->time_launches) {
      result.ms = rt::time_ms([&] { op.call(views, r_.params, nullptr); },
                              nullptr, options.warmup, options.iters);
    } else {
      std::vector<const rt::DeviceBuffer *> all;
      for (const rt::DeviceBuffer &b : buffers)
        all.push_back(&b);
      const Rotation rotation(all, result.bytes);
      std::vector<rt::TensorView> moved = views;
      result.ms = rt::time_graph_ms(
          [&](CUstream s, int call) {
            for (size_t i = 0; i < views.size(); ++i)
              moved[i] = ops::is_absent(views[i]) ? views[i]
                                                  : rotation.at(views[i], call);
            op.call(moved, r_.params, s);
          },
          options.warmup, options.iters);
    }
    result.copy_ms = copy_roofline_ms(result.bytes, options);
  }
  return result;
}

RunResult run_case(const ops::OpDef &op, const Case &c,
                   const RunOptions &options) {
  return Prepared::make(resolve(op, c), options.seed).run(options);
}

void run_cases(
    const ops::OpDef &op, const std::vector<Case> &cases,
    const RunOptions &options,
    const std::function<void(const Case &, const RunResult &)> &done) {
  const size_t batch = std::max(1u, std::thread::hardware_concurrency());
  // Case i's inputs' seed.
  auto seed_of = [&](size_t i) { return options.seed + i; };
  for (size_t first = 0; first < cases.size(); first += batch) {
    const size_t last = std::min(cases.size(), first + batch);
    std::vector<std::future<Prepared>> prepared;
    for (size_t i = first; i < last; ++i)
      prepared.push_back(std::async(std::launch::async, [&, i] {
        return Prepared::make(resolve(op, cases[i]), seed_of(i));
      }));
    // A case that throws fails alone; the others still run.
    for (size_t i = first; i < last; ++i) {
      RunResult r;
      try {
        r = prepared[i - first].get().run(options);
      } catch (const Error &e) {
        r.shape = cases[i].label;
        r.check = e.what();
        r.seed = seed_of(i);
        r.passed = false;
      }
      done(cases[i], r);
    }
  }
}

// --- fake tensors
// ---------------------------------------------------------------

rt::TensorView fake(DType dtype, std::vector<int64_t> shape,
                    std::vector<int64_t> strides, CUdeviceptr address) {
  if (strides.empty())
    strides = ref::contiguous_strides(shape);
  return rt::TensorView::strided(address, dtype, shape, strides);
}

// --- the registry of op tests
// --------------------------------------------------------

namespace {
std::map<std::string, OpTest> &tests() {
  static std::map<std::string, OpTest> t;
  return t;
}
} // namespace

TestRegistrar::TestRegistrar(OpTest (*make)()) {
  OpTest t = make();
  std::string name = t.op;
  tests()[name] = std::move(t);
}

const OpTest *find_test(std::string_view op) {
  auto it = tests().find(std::string(op));
  return it == tests().end() ? nullptr : &it->second;
}

std::vector<const OpTest *> all_tests() {
  std::vector<const OpTest *> out;
  for (const auto &[name, t] : tests())
    out.push_back(&t);
  return out;
}

} // namespace tilejit::harness
