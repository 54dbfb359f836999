// check.cpp - Argument validation for host entry points.
#include "common/check.h"

#include "tilejit/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <span>

namespace tilejit::ops {

static std::string shape_of(const rt::TensorView &t) {
  return fmt::format("[{}]",
                     fmt::join(std::span(t.shape.data(), t.rank), ", "));
}

void check_dtype(std::string_view op, std::string_view arg,
                 const rt::TensorView &t, DType want) {
  if (t.dtype != want)
    throw UserError(fmt::format("{}: argument '{}' has dtype {}; requires {}",
                                op, arg, name_of(t.dtype), name_of(want)));
}

void check_rank(std::string_view op, std::string_view arg,
                const rt::TensorView &t, int want) {
  if (t.rank != want)
    throw UserError(fmt::format(
        "{}: argument '{}' has shape {} (rank {}); requires rank {}", op, arg,
        shape_of(t), t.rank, want));
}

void check_same_shape(std::string_view op, std::string_view a_name,
                      const rt::TensorView &a, std::string_view b_name,
                      const rt::TensorView &b) {
  bool same = a.rank == b.rank;
  for (int i = 0; same && i < a.rank; ++i)
    same = a.shape[i] == b.shape[i];
  if (!same)
    throw UserError(fmt::format(
        "{}: argument '{}' has shape {}; requires the shape of '{}', {}", op,
        b_name, shape_of(b), a_name, shape_of(a)));
}

void check_pointer(std::string_view op, std::string_view arg,
                   const rt::TensorView &t) {
  for (int i = 0; i < t.rank; ++i)
    if (t.strides[i] < 0)
      throw UserError(fmt::format(
          "{}: argument '{}' has stride[{}] = {}; requires a non-negative "
          "stride",
          op, arg, i, t.strides[i]));
  if (t.numel() == 0)
    return;
  if (t.data == 0)
    throw UserError(fmt::format(
        "{}: argument '{}' is a null pointer with shape {}; requires device "
        "memory",
        op, arg, shape_of(t)));
  std::size_t align = size_of(t.dtype);
  if (t.data % align != 0)
    throw UserError(fmt::format(
        "{}: argument '{}' has address {:#x}; requires {}-byte alignment", op,
        arg, static_cast<uint64_t>(t.data), align));
}

rt::TensorView as_bytes(const rt::TensorView &t) {
  if (t.rank >= rt::TensorView::kMaxRank)
    throw InternalError(fmt::format("internal error: as_bytes of {}: no room "
                                    "for the byte dimension",
                                    t.to_string()));
  const int64_t elt = static_cast<int64_t>(size_of(t.dtype));
  std::array<int64_t, rt::TensorView::kMaxRank> shape{}, strides{};
  for (int i = 0; i < t.rank; ++i) {
    shape[i] = t.shape[i];
    strides[i] = t.strides[i] * elt;
  }
  shape[t.rank] = elt;
  strides[t.rank] = 1;
  return rt::TensorView::strided(t.data, DType::u8,
                                 std::span(shape.data(), t.rank + 1),
                                 std::span(strides.data(), t.rank + 1));
}

rt::TensorView as_words(const rt::TensorView &t) {
  std::array<int64_t, rt::TensorView::kMaxRank> shape{}, strides{};
  for (int i = 0; i < t.rank; ++i) {
    shape[i] = t.shape[i];
    strides[i] = t.strides[i] / 4;
  }
  if (t.rank > 0) {
    shape[t.rank - 1] = t.shape[t.rank - 1] / 4;
    strides[t.rank - 1] = 1;
  }
  return rt::TensorView::strided(t.data, DType::u32,
                                 std::span(shape.data(), t.rank),
                                 std::span(strides.data(), t.rank));
}

rt::TensorView repeated(const rt::TensorView &t, int at, int64_t copies) {
  if (t.rank >= rt::TensorView::kMaxRank || at < 0 || at > t.rank)
    throw InternalError(fmt::format("internal error: repeated({}, {}): no "
                                    "dimension {} to insert",
                                    t.to_string(), at, at));
  std::array<int64_t, rt::TensorView::kMaxRank> shape{}, strides{};
  for (int i = 0, j = 0; i <= t.rank; ++i) {
    if (i == at) {
      shape[i] = copies;
      strides[i] = 0;
      continue;
    }
    shape[i] = t.shape[j];
    strides[i] = t.strides[j];
    ++j;
  }
  return rt::TensorView::strided(t.data, t.dtype,
                                 std::span(shape.data(), t.rank + 1),
                                 std::span(strides.data(), t.rank + 1));
}

rt::TensorView view_as(const rt::TensorView &t, std::vector<int64_t> shape,
                       std::vector<int64_t> strides) {
  return rt::TensorView::strided(t.data, t.dtype, shape, strides);
}

bool rows_aligned(const rt::TensorView &t, int bytes) {
  if (t.rank == 0 || t.data % bytes != 0)
    return false;
  if (t.strides[t.rank - 1] != 1 && t.shape[t.rank - 1] > 1)
    return false;
  int64_t elt = static_cast<int64_t>(size_of(t.dtype));
  for (int i = 0; i + 1 < t.rank; ++i)
    if (t.shape[i] > 1 && (t.strides[i] * elt) % bytes != 0)
      return false;
  return true;
}

} // namespace tilejit::ops
