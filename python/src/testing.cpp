// testing.cpp - tilejit._testing: the ops' case tables for Python tests
// (built with TILEJIT_PYTHON_TESTING, not part of the package): a case's
// inputs as the harness fills them, and the harness's check of the outputs
// a Python call wrote against the CPU reference, so that a test can launch
// every op through tilejit.ops with torch's tensors and stream and judge it
// exactly as the C++ GPU tests do.
#include "shared.h"

#include "run.h"

#include "tilejit/error.h"

#include <fmt/format.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace tilejit;

namespace {

const harness::OpTest &test_named(const std::string &op) {
  if (const harness::OpTest *t = harness::find_test(op))
    return *t;
  throw UserError(fmt::format("no op test named '{}'", op));
}

/// Bytes a layout's storage spans.
size_t extent_bytes(const ops::TensorShape &t) {
  return static_cast<size_t>(harness::extent(t)) * size_of(t.dtype);
}

/// One case of an op's table, its inputs filled and its reference computed.
class PreparedCase {
public:
  PreparedCase(const std::string &op, size_t index, uint64_t seed) {
    const harness::OpTest &test = test_named(op);
    if (index >= test.cases.size())
      throw UserError(fmt::format("{}: case {} asked for; the table has {}", op,
                                  index, test.cases.size()));
    const ops::OpDef *def = ops::find_op(op);
    if (!def)
      throw UserError(fmt::format("no op named '{}'", op));
    nb::gil_scoped_release release;
    prepared_ = harness::Prepared::make(
        harness::resolve(*def, test.cases[index]), seed);
  }

  std::string label() const { return prepared_.resolved().label; }
  bool poison() const {
    const harness::OpTest *t = prepared_.resolved().test;
    return t && t->poison_outputs;
  }

  /// Per tensor, in declaration order: (name, is output, left out, dtype
  /// name, shape, strides, the input's bytes or None).
  nb::list tensors() const {
    const harness::Resolved &r = prepared_.resolved();
    nb::list out;
    int input = 0;
    for (size_t i = 0; i < r.tensors.size(); ++i) {
      const ops::TensorDecl &decl = r.op->tensors[i];
      const ops::TensorShape &t = r.tensors[i];
      nb::object data = nb::none();
      if (!decl.output) {
        const ref::HostTensor &h = prepared_.data().call.inputs[input++];
        if (!r.absent[i])
          data = nb::bytes(reinterpret_cast<const char *>(h.raw()),
                           extent_bytes(t));
      }
      out.append(nb::make_tuple(decl.name, decl.output, bool(r.absent[i]),
                                std::string(name_of(t.dtype)), t.shape,
                                t.strides, data));
    }
    return out;
  }

  nb::list params() const {
    nb::list out;
    for (const ops::ParamValue &v : prepared_.resolved().params)
      out.append(python::value_of(v));
    return out;
  }

  /// The outputs' bytes (declaration order among the outputs, each as
  /// tensors() lays it out; None for one left out) against the reference:
  /// (passed, what was checked or the first difference).
  std::tuple<bool, std::string> check(const nb::list &outputs) const {
    const harness::Resolved &r = prepared_.resolved();
    std::vector<ref::HostTensor> got;
    size_t j = 0;
    for (size_t i = 0; i < r.tensors.size(); ++i) {
      if (!r.op->tensors[i].output)
        continue;
      if (j >= outputs.size())
        throw UserError(fmt::format("{}: {} outputs given; the op has more",
                                    r.op->name, outputs.size()));
      nb::handle o = outputs[j++];
      if (r.absent[i] || o.is_none()) {
        got.emplace_back();
        continue;
      }
      const ops::TensorShape &t = r.tensors[i];
      ref::HostTensor h =
          ref::HostTensor::zeros_strided(t.dtype, t.shape, t.strides);
      const nb::bytes b = nb::cast<nb::bytes>(o);
      if (b.size() != extent_bytes(t))
        throw UserError(fmt::format("{}: output '{}' has {} bytes; its "
                                    "layout spans {}",
                                    r.op->name, r.op->tensors[i].name, b.size(),
                                    extent_bytes(t)));
      std::memcpy(h.raw(), b.c_str(), b.size());
      got.push_back(std::move(h));
    }
    if (j != outputs.size())
      throw UserError(fmt::format("{}: {} outputs given; the op has {}",
                                  r.op->name, outputs.size(), j));
    nb::gil_scoped_release release;
    const harness::RunResult result = prepared_.check(std::move(got));
    return {result.passed, result.check};
  }

private:
  harness::Prepared prepared_;
};

} // namespace

NB_MODULE(_testing, m) {
  m.doc() = "tilejit's case tables for Python tests (not part of the "
            "package)";
  python::translate_errors();
  m.def(
      "cases",
      [](const std::string &op) {
        std::vector<std::tuple<size_t, std::string, int>> out;
        const harness::OpTest &test = test_named(op);
        for (size_t i = 0; i < test.cases.size(); ++i)
          out.emplace_back(i, test.cases[i].label, test.cases[i].kind);
        return out;
      },
      "An op's case table: (index, label, kind: 1 gpu | 2 bench | 4 big).");
  m.attr("GPU") = int(harness::Case::gpu);
  m.attr("BENCH") = int(harness::Case::bench);
  m.attr("BIG") = int(harness::Case::big);
  nb::class_<PreparedCase>(m, "Prepared")
      .def(nb::init<const std::string &, size_t, uint64_t>(), nb::arg("op"),
           nb::arg("index"), nb::arg("seed") = 2026)
      .def_prop_ro("label", &PreparedCase::label)
      .def_prop_ro("poison", &PreparedCase::poison)
      .def("tensors", &PreparedCase::tensors)
      .def("params", &PreparedCase::params)
      .def("check", &PreparedCase::check);
}
