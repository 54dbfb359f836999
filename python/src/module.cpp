// module.cpp - tilejit._C: the op declarations and one generic entry, bound
// once with nanobind; the Python layer (tilejit/__init__.py) derives every
// op's function from the declarations. Tensors cross as (data pointer,
// dtype name, shape, strides in elements) tuples or None (an optional
// tensor left out), so no framework's headers are needed here.
#include "op/op_def.h"

#include "tilejit/error.h"

#include <fmt/format.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace tilejit;

namespace {

using TensorArg =
    std::optional<std::tuple<uint64_t, std::string, std::vector<int64_t>,
                             std::vector<int64_t>>>;

const ops::OpDef &op_named(const std::string &name) {
  if (const ops::OpDef *op = ops::find_op(name))
    return *op;
  throw UserError(fmt::format("no op named '{}'", name));
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

nb::object value_of(const ops::ParamValue &v) {
  return std::visit([](const auto &x) { return nb::cast(x); }, v);
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
    d["default"] = value_of(p.default_value);
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

/// The views of a call's tensors, in declaration order.
std::vector<rt::TensorView> views(const ops::OpDef &op,
                                  const std::vector<TensorArg> &tensors) {
  if (tensors.size() != op.tensors.size())
    throw UserError(fmt::format("{}: {} tensors given; the op takes {}",
                                op.name, tensors.size(), op.tensors.size()));
  std::vector<rt::TensorView> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]) {
      out.push_back(ops::absent());
      continue;
    }
    const auto &[data, dtype, shape, strides] = *tensors[i];
    std::optional<DType> d = parse_dtype(dtype);
    if (!d)
      throw UserError(fmt::format("{}: argument '{}' has dtype '{}', which "
                                  "tilejit does not know",
                                  op.name, op.tensors[i].name, dtype));
    out.push_back(rt::TensorView::strided(data, *d, shape, strides));
  }
  return out;
}

/// Python values as the declared parameter types (a bool is not an int,
/// an int may stand for a float).
std::vector<ops::ParamValue> params_of(const ops::OpDef &op,
                                       const nb::list &values) {
  if (values.size() != op.params.size())
    throw UserError(fmt::format("{}: {} parameters given; the op takes {}",
                                op.name, values.size(), op.params.size()));
  std::vector<ops::ParamValue> out;
  for (size_t i = 0; i < op.params.size(); ++i) {
    const ops::ParamDecl &p = op.params[i];
    nb::handle v = values[i];
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
  }
  return out;
}

/// A call's op, tensor views and parameters, from Python's.
struct Args {
  const ops::OpDef &op;
  std::vector<rt::TensorView> tensors;
  std::vector<ops::ParamValue> params;
};

Args args_of(const std::string &name, const std::vector<TensorArg> &tensors,
             const nb::list &params) {
  const ops::OpDef &op = op_named(name);
  return {op, views(op, tensors), params_of(op, params)};
}

} // namespace

NB_MODULE(_C, m) {
  m.doc() = "tilejit's op declarations and generic entry (see tilejit)";
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const UserError &e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def("ops", [] {
    nb::list out;
    for (const ops::OpDef *op : ops::all_ops())
      out.append(describe(*op));
    return out;
  });
  m.def(
      "check",
      [](const std::string &name, const std::vector<TensorArg> &tensors,
         const nb::list &params) {
        const Args a = args_of(name, tensors, params);
        ops::Call(a.op, a.tensors, a.params); // validates, op.check too
      },
      "Validates a call (tensors in declaration order, parameters as "
      "declared) without launching; ValueError names the argument, its "
      "value and the requirement.");
  m.def(
      "output_layouts",
      [](const std::string &name, const std::vector<TensorArg> &tensors,
         const nb::list &params) {
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
      [](const std::string &name, const std::vector<TensorArg> &tensors,
         const nb::list &params, uint64_t stream) {
        const Args a = args_of(name, tensors, params);
        nb::gil_scoped_release release;
        a.op.call(a.tensors, a.params, reinterpret_cast<CUstream>(stream));
      },
      "Validates and launches on `stream` (a CUstream as an int).");
}
