// module.cpp - tilejit._C: the op declarations and one generic entry, bound
// once with nanobind; the Python layer (tilejit/__init__.py) derives every
// op's function from the declarations. Tensors are any objects with
// data_ptr(), dtype, shape and stride() (torch's tensors), read through
// those, or None (an optional tensor left out), so no framework's headers
// are needed here.
#include "shared.h"

#include "common/jit.h"
#include "op/op_def.h"

#include "tilejit/error.h"
#include "tilejit/runtime/kernel_cache.h"

#include <fmt/format.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace tilejit;

namespace {

const ops::OpDef &op_named(const std::string &name) {
  if (const ops::OpDef *op = ops::find_op(name))
    return *op;
  throw UserError(fmt::format("no op named '{}'", name));
}

/// op_named for a Python str, remembered by the object (the generated
/// functions pass the same str each call; at most 256, with the GIL held):
/// a pointer compare instead of a string made and looked up per call.
const ops::OpDef &op_of(nb::handle name) {
  static std::vector<std::pair<PyObject *, const ops::OpDef *>> seen;
  for (const auto &[object, op] : seen)
    if (object == name.ptr())
      return *op;
  const ops::OpDef &op = op_named(nb::cast<std::string>(name));
  if (seen.size() < 256)
    seen.emplace_back(name.inc_ref().ptr(), &op);
  return op;
}

/// A tuple of Python ints, made directly (nb::cast of a vector makes a
/// list, which a tuple then copies).
nb::tuple int_tuple(const std::vector<int64_t> &values) {
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
  if (!t.is_valid())
    throw nb::python_error();
  for (size_t i = 0; i < values.size(); ++i) {
    PyObject *v = PyLong_FromLongLong(values[i]);
    if (!v)
      throw nb::python_error();
    PyTuple_SetItem(t.ptr(), static_cast<Py_ssize_t>(i), v); // steals v
  }
  return nb::borrow<nb::tuple>(t);
}

/// Calls f(item) for each item of a sequence: a tuple's (torch.Size and
/// stride() are tuples) by index, any other through an iterator (which
/// costs an object and a call an item).
template <class F> void for_each_item(nb::handle seq, F &&f) {
  if (PyTuple_Check(seq.ptr())) {
    const Py_ssize_t n = PyTuple_Size(seq.ptr());
    for (Py_ssize_t i = 0; i < n; ++i)
      f(nb::handle(PyTuple_GetItem(seq.ptr(), i)));
    return;
  }
  for (nb::handle v : seq)
    f(v);
}

const char *type_name(ops::ParamDecl::Type t) {
  switch (t) {
  case ops::ParamDecl::Type::boolean:
    return "bool";
  case ops::ParamDecl::Type::integer:
    return "int";
  case ops::ParamDecl::Type::real:
    return "float";
  case ops::ParamDecl::Type::choice:
    return "choice";
  }
  return "?";
}

/// An op's declaration as plain Python data.
nb::dict describe(const ops::OpDef &op) {
  nb::list tensors, params;
  for (const ops::TensorDecl &t : op.tensors) {
    nb::list dtypes;
    for (DType d : t.dtypes)
      dtypes.append(std::string(name_of(d)));
    nb::dict d;
    d["name"] = t.name;
    d["output"] = t.output;
    d["optional"] = t.optional;
    d["dtypes"] = dtypes;
    d["same_dtype_as"] = t.same_dtype_as;
    d["shape"] = t.shape;
    d["doc"] = t.doc;
    tensors.append(d);
  }
  for (const ops::ParamDecl &p : op.params) {
    nb::dict d;
    d["name"] = p.name;
    d["type"] = type_name(p.type);
    d["default"] = python::value_of(p.default_value);
    d["choices"] = p.choices;
    d["doc"] = p.doc;
    if (p.type == ops::ParamDecl::Type::integer) {
      d["min"] = p.min;
      d["max"] = p.max;
    }
    params.append(d);
  }
  nb::dict d;
  d["name"] = op.name;
  d["summary"] = op.summary;
  d["tensors"] = tensors;
  d["params"] = params;
  return d;
}

/// torch's and NumPy's dtype names (str(torch.bfloat16) is
/// "torch.bfloat16") to tilejit's; the first name of each is torch's.
constexpr std::pair<std::string_view, DType> kDTypeNames[] = {
    {"float32", DType::f32},      {"float", DType::f32},
    {"float16", DType::f16},      {"half", DType::f16},
    {"bfloat16", DType::bf16},    {"float8_e4m3fn", DType::e4m3},
    {"float8_e5m2", DType::e5m2}, {"int8", DType::i8},
    {"uint8", DType::u8},         {"int32", DType::i32},
    {"int", DType::i32},          {"int64", DType::i64},
    {"long", DType::i64},         {"float64", DType::f64},
    {"double", DType::f64},       {"uint32", DType::u32},
    {"uint64", DType::u64},       {"bool", DType::boolean}};

std::optional<DType> dtype_named(std::string_view name) {
  if (name.starts_with("torch."))
    name.remove_prefix(6);
  for (const auto &[n, d] : kDTypeNames)
    if (n == name)
      return d;
  return parse_dtype(name);
}

/// torch's dtype object of `d` (torch imported on first use): the first of
/// dtype_named's names for it is torch's attribute.
nb::handle torch_dtype(DType d) {
  static std::array<nb::object *, 16> table{}; // live with _C
  const auto i = static_cast<size_t>(d);
  if (!table.at(i)) {
    std::string_view attr;
    for (const auto &[n, k] : kDTypeNames)
      if (k == d && attr.empty())
        attr = n;
    table[i] = new nb::object(
        nb::module_::import_("torch").attr(nb::str(attr.data(), attr.size())));
  }
  return *table[i];
}

/// The DType of a dtype object. torch's dtypes are singletons, so each is
/// named once and then found by address (its reference kept); a str, or
/// any object past the first 64 seen, is named every time (so that fresh
/// objects neither fill the table nor slow its scan).
std::optional<DType> dtype_of(nb::handle dtype) {
  static std::vector<std::pair<PyObject *, std::optional<DType>>> seen;
  for (const auto &[object, d] : seen)
    if (object == dtype.ptr())
      return d;
  std::optional<DType> d = dtype_named(nb::str(dtype).c_str());
  if (!nb::isinstance<nb::str>(dtype) && seen.size() < 64)
    seen.emplace_back(dtype.inc_ref().ptr(), d);
  return d;
}

/// DLPack's dtype as tilejit's (one lane).
std::optional<DType> dtype_of(nb::dlpack::dtype d) {
  using Code = nb::dlpack::dtype_code;
  if (d.lanes != 1)
    return std::nullopt;
  switch (static_cast<Code>(d.code)) {
  case Code::Float:
    return d.bits == 32   ? std::optional(DType::f32)
           : d.bits == 16 ? std::optional(DType::f16)
           : d.bits == 64 ? std::optional(DType::f64)
                          : std::nullopt;
  case Code::Bfloat:
    return d.bits == 16 ? std::optional(DType::bf16) : std::nullopt;
  case Code::Int:
    return d.bits == 8    ? std::optional(DType::i8)
           : d.bits == 32 ? std::optional(DType::i32)
           : d.bits == 64 ? std::optional(DType::i64)
                          : std::nullopt;
  case Code::UInt:
    return d.bits == 8    ? std::optional(DType::u8)
           : d.bits == 32 ? std::optional(DType::u32)
           : d.bits == 64 ? std::optional(DType::u64)
                          : std::nullopt;
  case Code::Bool:
    return DType::boolean;
  case Code::Float8_E4M3FN:
    return DType::e4m3;
  case Code::Float8_E5M2:
    return DType::e5m2;
  default:
    return std::nullopt;
  }
}

nb::builtin_exception not_a_tensor(const ops::TensorDecl &decl, nb::handle t) {
  return nb::type_error(
      fmt::format("argument '{}' is a {}; requires a tensor (data_ptr(), "
                  "dtype, shape, stride(); or DLPack) or None",
                  decl.name, nb::type_name(t.type()).c_str())
          .c_str());
}

/// An object with no data_ptr(): a DLPack tensor (NumPy, CuPy, JAX, ...).
rt::TensorView dlpack_view(const ops::OpDef &op, const ops::TensorDecl &decl,
                           nb::handle t, bool launch) {
  nb::ndarray<> a;
  if (!nb::try_cast(t, a))
    throw not_a_tensor(decl, t);
  const std::optional<DType> d = dtype_of(a.dtype());
  if (!d)
    throw UserError(fmt::format("{}: argument '{}' has DLPack dtype (code "
                                "{}, {} bits, {} lanes), which tilejit does "
                                "not know",
                                op.name, decl.name, a.dtype().code,
                                a.dtype().bits, a.dtype().lanes));
  if (launch && a.device_type() != nb::device::cuda::value)
    throw UserError(fmt::format("{}: argument '{}' is in DLPack device type "
                                "{}; requires CUDA memory (2)",
                                op.name, decl.name, a.device_type()));
  std::vector<int64_t> shape, strides;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape.push_back(static_cast<int64_t>(a.shape(i)));
    strides.push_back(a.stride(i));
  }
  return rt::TensorView::strided(reinterpret_cast<uint64_t>(a.data()), *d,
                                 shape, strides);
}

/// The attribute names a tensor is read through, interned once (a name
/// made per read costs a str each time).
struct AttrNames {
  nb::str data_ptr{"data_ptr"}, dtype{"dtype"}, shape{"shape"},
      stride{"stride"}, is_cuda{"is_cuda"};
};
const AttrNames &attr_names() {
  static const AttrNames *names = new AttrNames(); // lives with the module
  return *names;
}

/// `t.name`, or a null object (the AttributeError cleared) where `t` has
/// no such attribute. No hasattr before: on a torch tensor hasattr(t,
/// "shape") builds the shape it then throws away (a quarter of a call's
/// cost once).
nb::object attr_or_null(nb::handle t, const nb::str &name) {
  PyObject *v = PyObject_GetAttr(t.ptr(), name.ptr());
  if (!v) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
      throw nb::python_error();
    PyErr_Clear();
  }
  return nb::steal(v);
}

/// The ints of a shape or strides tuple (any sequence) into `out`; their
/// count. UserError past TensorView::kMaxRank.
size_t ints_of(nb::handle seq,
               std::array<int64_t, rt::TensorView::kMaxRank> &out,
               const ops::OpDef &op, const ops::TensorDecl &decl) {
  size_t n = 0;
  for_each_item(seq, [&](nb::handle v) {
    if (n == out.size())
      throw UserError(fmt::format("{}: argument '{}' has more than {} "
                                  "dimensions; requires at most {}",
                                  op.name, decl.name, out.size(), out.size()));
    out[n++] = nb::cast<int64_t>(v);
  });
  return n;
}

/// A tensor argument (anything with data_ptr(), dtype, shape and
/// stride(), as torch's tensors; else a DLPack tensor; None: left out) as a
/// view. For a launch (`launch`), one whose `is_cuda` is false (or, without
/// is_cuda, whose `device.type` is not "cuda") is refused: its memory is not
/// the GPU's.
rt::TensorView view_of(const ops::OpDef &op, const ops::TensorDecl &decl,
                       nb::handle t, bool launch = false) {
  if (t.is_none())
    return ops::absent();
  const AttrNames &names = attr_names();
  nb::object data_ptr = attr_or_null(t, names.data_ptr);
  if (!data_ptr.is_valid())
    return dlpack_view(op, decl, t, launch);
  nb::object dtype = attr_or_null(t, names.dtype);
  nb::object shape = attr_or_null(t, names.shape);
  nb::object stride = attr_or_null(t, names.stride);
  if (!dtype.is_valid() || !shape.is_valid() || !stride.is_valid())
    throw not_a_tensor(decl, t);
  if (launch) {
    // torch's is_cuda is a plain bool (device.type makes a torch.device
    // object: 0.7 us); the device only where there is no is_cuda, and for
    // the message.
    nb::object is_cuda = attr_or_null(t, names.is_cuda);
    auto device_type = [&]() -> std::string {
      nb::object device = nb::getattr(t, "device", nb::none());
      if (device.is_none() || !nb::hasattr(device, "type"))
        return "";
      return nb::str(device.attr("type")).c_str();
    };
    std::string type;
    const bool cuda = !is_cuda.is_valid() || is_cuda.is_none()
                          ? ((type = device_type()).empty() || type == "cuda")
                          : nb::cast<bool>(is_cuda);
    if (!cuda) {
      if (type.empty())
        type = device_type();
      throw UserError(fmt::format("{}: argument '{}' is on {}; requires a "
                                  "CUDA tensor",
                                  op.name, decl.name,
                                  type.empty() ? "no CUDA device" : type));
    }
  }
  std::optional<DType> d = dtype_of(dtype);
  if (!d) {
    std::string name = nb::str(dtype).c_str();
    if (name.starts_with("torch."))
      name.erase(0, 6);
    throw UserError(fmt::format("{}: argument '{}' has dtype '{}', which "
                                "tilejit does not know",
                                op.name, decl.name, name));
  }
  std::array<int64_t, rt::TensorView::kMaxRank> sizes, strides;
  const size_t rank = ints_of(shape, sizes, op, decl);
  const size_t strided = ints_of(stride(), strides, op, decl);
  return rt::TensorView::strided(nb::cast<uint64_t>(data_ptr()), *d,
                                 std::span(sizes.data(), rank),
                                 std::span(strides.data(), strided));
}

/// The views of a call's tensors, in declaration order.
std::vector<rt::TensorView> views(const ops::OpDef &op,
                                  const nb::sequence &tensors, bool launch) {
  const size_t n = nb::len(tensors);
  if (n != op.tensors.size())
    throw UserError(fmt::format("{}: {} tensors given; the op takes {}",
                                op.name, n, op.tensors.size()));
  std::vector<rt::TensorView> out;
  out.reserve(n);
  size_t i = 0;
  for_each_item(tensors, [&](nb::handle t) {
    out.push_back(view_of(op, op.tensors[i++], t, launch));
  });
  return out;
}

/// Python values as the declared parameter types (a bool is not an int,
/// an int may stand for a float).
std::vector<ops::ParamValue> params_of(const ops::OpDef &op,
                                       const nb::sequence &values) {
  const size_t n = nb::len(values);
  if (n != op.params.size())
    throw UserError(fmt::format("{}: {} parameters given; the op takes {}",
                                op.name, n, op.params.size()));
  std::vector<ops::ParamValue> out;
  out.reserve(n);
  size_t i = 0;
  for_each_item(values, [&](nb::handle v) {
    const ops::ParamDecl &p = op.params[i++];
    auto wrong = [&](const char *want) {
      return UserError(fmt::format("{}: argument '{}' is {}; requires {}",
                                   op.name, p.name,
                                   nb::str(nb::repr(v)).c_str(), want));
    };
    switch (p.type) {
    case ops::ParamDecl::Type::boolean:
      if (!nb::isinstance<nb::bool_>(v))
        throw wrong("a bool");
      out.emplace_back(nb::cast<bool>(v));
      break;
    case ops::ParamDecl::Type::integer: {
      if (!nb::isinstance<nb::int_>(v) || nb::isinstance<nb::bool_>(v))
        throw wrong("an int");
      int64_t n;
      if (!nb::try_cast(v, n))
        throw wrong("an int of 64 bits");
      out.emplace_back(n);
      break;
    }
    case ops::ParamDecl::Type::real:
      if (nb::isinstance<nb::bool_>(v) ||
          !(nb::isinstance<nb::float_>(v) || nb::isinstance<nb::int_>(v)))
        throw wrong("a float");
      out.emplace_back(nb::cast<double>(v));
      break;
    case ops::ParamDecl::Type::choice:
      if (!nb::isinstance<nb::str>(v))
        throw wrong("a str");
      out.emplace_back(nb::cast<std::string>(v));
      break;
    }
  });
  return out;
}

/// A call's op, tensor views and parameters, from Python's.
struct Args {
  const ops::OpDef &op;
  std::vector<rt::TensorView> tensors;
  std::vector<ops::ParamValue> params;
};

/// `launch`: the tensors must be in GPU memory (view_of).
Args args_of(nb::handle name, const nb::sequence &tensors,
             const nb::sequence &params, bool launch = false) {
  const ops::OpDef &op = op_of(name);
  return {op, views(op, tensors, launch), params_of(op, params)};
}

/// Allocates the outputs named in `allocate` in the layouts
/// OpDef::output_layouts gives, with `empty_strided(shape, strides,
/// dtype=..., device=device)` (None: torch's, imported on the first
/// allocation, after the inputs validated: so a call that fails needs no
/// torch), of the dtype `chosen` names for
/// the output (a dict, or None) else the layout's;
/// validates and launches on `stream`; the outputs in declaration order
/// (None for an optional one neither given nor allocated). One crossing
/// for what an allocating caller does per call.
nb::list call_allocating(const nb::str &name, nb::sequence tensors,
                         const nb::sequence &params, uint64_t stream,
                         const nb::sequence &allocate,
                         const nb::object &empty_strided,
                         const nb::object &device, const nb::object &chosen) {
  Args a = args_of(name, tensors, params, true);
  std::vector<nb::object> objects;
  objects.reserve(a.tensors.size());
  for_each_item(tensors,
                [&](nb::handle t) { objects.push_back(nb::borrow(t)); });
  if (nb::len(allocate) > 0) {
    std::vector<rt::TensorView> inputs = a.tensors;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (a.op.tensors[i].output)
        inputs[i] = ops::absent();
    const std::vector<ops::TensorShape> layouts =
        a.op.output_layouts(inputs, a.params);
    const AttrNames &names = attr_names();
    static nb::object *torch_empty_strided = nullptr; // lives with _C
    if (empty_strided.is_none() && !torch_empty_strided)
      torch_empty_strided =
          new nb::object(nb::module_::import_("torch").attr("empty_strided"));
    const nb::object &empty =
        empty_strided.is_none() ? *torch_empty_strided : empty_strided;
    for_each_item(allocate, [&](nb::handle n) {
      const std::string out = nb::cast<std::string>(n);
      const int i = a.op.tensor_index(out);
      if (i < 0 || !a.op.tensors[i].output)
        throw UserError(fmt::format("{}: '{}' is no output", a.op.name, out));
      const ops::TensorShape &l =
          layouts[static_cast<size_t>(a.op.index_among(out, true))];
      nb::object dtype;
      if (!chosen.is_none())
        dtype = nb::borrow(PyDict_GetItem(chosen.ptr(), n.ptr()));
      if (!dtype.is_valid())
        dtype = nb::borrow(torch_dtype(l.dtype));
      nb::object t =
          empty(int_tuple(l.shape), int_tuple(l.strides),
                nb::arg("dtype") = dtype, nb::arg("device") = device);
      // Laid out as asked: only its address and dtype (the chosen one may
      // differ from the layout's, e.g. cast's) are read back.
      const std::optional<DType> d = dtype_of(dtype);
      if (!d)
        throw UserError(fmt::format("{}: output '{}' was asked in a dtype "
                                    "tilejit does not know",
                                    a.op.name, out));
      a.tensors[i] = rt::TensorView::strided(
          nb::cast<uint64_t>(t.attr(names.data_ptr)()), *d, l.shape, l.strides);
      objects[i] = std::move(t);
    });
  }
  {
    nb::gil_scoped_release release;
    a.op.call(a.tensors, a.params, reinterpret_cast<CUstream>(stream));
  }
  nb::list out;
  for (size_t i = 0; i < objects.size(); ++i)
    if (a.op.tensors[i].output)
      out.append(objects[i]);
  return out;
}

const char *source_name(rt::CacheSource s) {
  switch (s) {
  case rt::CacheSource::memory:
    return "memory";
  case rt::CacheSource::disk:
    return "disk";
  case rt::CacheSource::compiled:
    return "compiled";
  }
  return "?";
}

nb::dict stats_dict(const rt::CacheStats &s) {
  nb::dict d;
  d["memory_hits"] = s.memory_hits;
  d["disk_hits"] = s.disk_hits;
  d["compiles"] = s.compiles;
  d["corrupt"] = s.corrupt;
  d["compile_ms"] = s.compile_ms;
  return d;
}

/// The call's key, digest and what the disk cache holds for it: whether the
/// entry is there, else how the nearest entry of the same op differs.
nb::dict explain(const nb::str &name, const nb::sequence &tensors,
                 const nb::sequence &params) {
  const Args a = args_of(name, tensors, params);
  const ops::Call c(a.op, a.tensors, a.params);
  const rt::SpecKey key = a.op.key(c);
  rt::KernelCache &cache = rt::KernelCache::global();
  nb::dict d;
  d["key"] = key.canonical();
  d["digest"] = key.digest();
  d["on_disk"] = cache.load(key.digest()).has_value();
  std::vector<std::string> nearest;
  bool found = false;
  for (const rt::DiskEntry &e : cache.list()) {
    if (e.key.op() != key.op() || e.digest == key.digest())
      continue;
    std::vector<std::string> diff = rt::key_differences(e.key, key);
    if (!found || diff.size() < nearest.size())
      nearest = std::move(diff);
    found = true;
  }
  d["nearest_differs"] = nearest;
  d["cache_dir"] = cache.config().dir;
  return d;
}

} // namespace

NB_MODULE(_C, m) {
  m.doc() = "tilejit's op declarations and generic entry (see tilejit)";
  python::translate_errors();
  m.def("ops", [] {
    nb::list out;
    for (const ops::OpDef *op : ops::all_ops())
      out.append(describe(*op));
    return out;
  });
  m.def(
      "check",
      [](const nb::str &name, const nb::sequence &tensors,
         const nb::sequence &params) {
        const Args a = args_of(name, tensors, params);
        ops::Call(a.op, a.tensors, a.params); // validates, op.check too
      },
      "Validates a call (tensors in declaration order, parameters as "
      "declared) without launching; ValueError names the argument, its "
      "value and the requirement.");
  m.def(
      "output_layouts",
      [](const nb::str &name, const nb::sequence &tensors,
         const nb::sequence &params) {
        const Args a = args_of(name, tensors, params);
        std::vector<
            std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>>>
            out;
        for (const ops::TensorShape &t :
             a.op.output_layouts(a.tensors, a.params))
          out.emplace_back(std::string(name_of(t.dtype)), t.shape, t.strides);
        return out;
      },
      "The outputs' (dtype name, shape, strides), in declaration order, from "
      "the inputs and parameters alone (the outputs None).");
  m.def(
      "call",
      [](const nb::str &name, const nb::sequence &tensors,
         const nb::sequence &params, uint64_t stream) {
        const Args a = args_of(name, tensors, params, true);
        nb::gil_scoped_release release;
        a.op.call(a.tensors, a.params, reinterpret_cast<CUstream>(stream));
      },
      "Validates and launches on `stream` (a CUstream as an int).");
  m.def("call_allocating", &call_allocating, nb::arg("op"), nb::arg("tensors"),
        nb::arg("params"), nb::arg("stream"), nb::arg("allocate"),
        nb::arg("empty_strided").none(), nb::arg("device").none(),
        nb::arg("chosen").none(),
        "Allocates the outputs named in `allocate` in their layouts from the "
        "inputs with `empty_strided(shape, strides, dtype=, device=device)` "
        "(None: torch's), "
        "of the dtype `chosen[name]` (a dict or None) else the layout's, "
        "validates and launches on `stream` (a "
        "CUstream as an int); returns the outputs in declaration order.");
  m.def(
      "precompile",
      [](const nb::str &name, const nb::sequence &tensors,
         const nb::sequence &params) {
        const Args a = args_of(name, tensors, params);
        const ops::Call c(a.op, a.tensors, a.params);
        const rt::SpecKey key = a.op.key(c);
        nb::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        const rt::CacheResult r =
            ops::compile_cached(key, [&] { return a.op.kernel(c); });
        // An op's later kernels too (the result tells of the first).
        for (int index = 1; index < a.op.kernel_count; ++index)
          (void)ops::compile_cached(a.op.key(c, index),
                                    [&] { return a.op.kernel(c, index); });
        const double ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        return std::tuple{key.digest(), std::string(source_name(r.source)), ms};
      },
      "Compiles a call's kernel into the cache (memory and disk) without "
      "launching it, no GPU needed: (digest, where it came from: memory, "
      "disk or compiled, ms).");
  m.def("explain", &explain,
        "A call's specialisation key, digest, whether the disk cache holds "
        "it, and how the nearest entry of the same op differs.");
  m.def("cache_dir", [] { return rt::KernelCache::global().config().dir; });
  m.def("cache_stats", [] {
    const rt::KernelCache &c = rt::KernelCache::global();
    nb::dict d;
    d["in_process"] = stats_dict(c.in_process_stats());
    d["persistent"] = stats_dict(c.persistent_stats());
    d["disk_problem"] = c.disk_problem();
    return d;
  });
  m.def("cache_entries", [] {
    nb::list out;
    for (const rt::DiskEntry &e : rt::KernelCache::global().list()) {
      nb::dict d;
      d["digest"] = e.digest;
      d["op"] = e.key.op();
      d["key"] = e.key.canonical();
      d["bytes"] = e.bytes;
      d["age_seconds"] = e.age_seconds;
      d["has_cubin"] = e.has_cubin;
      out.append(d);
    }
    return out;
  });
  m.def("cache_clear", [] { return rt::KernelCache::global().clear(); });
  m.def(
      "call_repeated",
      [](const nb::str &name, const nb::sequence &tensors,
         const nb::sequence &params, uint64_t stream, int64_t times) {
        const Args a = args_of(name, tensors, params, true);
        nb::gil_scoped_release release;
        for (int64_t i = 0; i < times; ++i)
          a.op.call(a.tensors, a.params, reinterpret_cast<CUstream>(stream));
      },
      "The same call `times` times from C++ (each validated and launched as "
      "`call` does): the C++ host cost of a call, for the Python layer's to "
      "be measured against.");
}
