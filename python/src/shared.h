// shared.h - What tilejit's Python modules (_C, _testing) share: tilejit's
// errors as Python exceptions (a named UserError is a ValueError with its
// text, any other tilejit error a RuntimeError) and parameter values as
// Python objects.
#pragma once

#include "op/op_def.h"

#include "tilejit/error.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <exception>
#include <variant>

namespace tilejit::python {

inline void translate_errors() {
  nanobind::register_exception_translator(
      [](const std::exception_ptr &p, void *) {
        try {
          std::rethrow_exception(p);
        } catch (const UserError &e) {
          PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const Error &e) {
          PyErr_SetString(PyExc_RuntimeError, e.what());
        }
      });
}

inline nanobind::object value_of(const ops::ParamValue &v) {
  return std::visit([](const auto &x) { return nanobind::cast(x); }, v);
}

} // namespace tilejit::python
