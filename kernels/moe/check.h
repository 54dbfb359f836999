// check.h - Argument checks shared by the MoE references (internal): each
// throws UserError "<fn>: argument '<arg>' <what it is>; requires <what>".
#pragma once

#include "common/host_tensor.h"
#include "tilejit/error.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace tilejit::moe::detail {

template <class... Args>
[[noreturn]] void fail(std::string_view fn, fmt::format_string<Args...> what,
                       Args &&...args) {
  throw UserError(fmt::format("{}: {}", fn,
                              fmt::format(what, std::forward<Args>(args)...)));
}

inline void check_dtype(std::string_view fn, std::string_view arg,
                        const ref::HostTensor &t, DType dtype) {
  if (t.dtype() != dtype)
    fail(fn, "argument '{}' has dtype {}; requires {}", arg, name_of(t.dtype()),
         name_of(dtype));
}

inline void check_rank(std::string_view fn, std::string_view arg,
                       const ref::HostTensor &t, int rank) {
  if (t.rank() != rank)
    fail(fn, "argument '{}' has shape [{}]; requires a {}-D tensor", arg,
         fmt::join(t.shape(), ", "), rank);
}

inline void check_contiguous(std::string_view fn, std::string_view arg,
                             const ref::HostTensor &t) {
  if (!t.is_contiguous())
    fail(fn,
         "argument '{}' has shape [{}] and strides [{}]; requires a "
         "contiguous tensor",
         arg, fmt::join(t.shape(), ", "), fmt::join(t.strides(), ", "));
}

/// dtype, rank and contiguity, in that order.
inline void check_tensor(std::string_view fn, std::string_view arg,
                         const ref::HostTensor &t, DType dtype, int rank) {
  check_dtype(fn, arg, t, dtype);
  check_rank(fn, arg, t, rank);
  check_contiguous(fn, arg, t);
}

/// Exact shape; `meaning` says where the numbers come from, e.g. "(T, K)".
inline void check_shape(std::string_view fn, std::string_view arg,
                        const ref::HostTensor &t,
                        std::initializer_list<int64_t> shape,
                        std::string_view meaning) {
  if (!std::equal(t.shape().begin(), t.shape().end(), shape.begin(),
                  shape.end()))
    fail(fn, "argument '{}' has shape [{}]; requires [{}] {}", arg,
         fmt::join(t.shape(), ", "), fmt::join(shape, ", "), meaning);
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t align(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

} // namespace tilejit::moe::detail
