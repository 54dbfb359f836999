// tensor.cpp - TensorView construction, validation and formatting.
#include "tilejit/runtime/tensor.h"

#include "tilejit/error.h"

#include <fmt/format.h>

namespace tilejit::rt {
namespace {

std::string list(std::span<const int64_t> values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

void check_shape(std::span<const int64_t> shape) {
  if (shape.size() > TensorView::kMaxRank)
    throw UserError(fmt::format("TensorView: rank {} is not supported (shape "
                                "{}); the rank must be at most {}",
                                shape.size(), list(shape),
                                TensorView::kMaxRank));
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      throw UserError(fmt::format("TensorView: dim {} has size {} (shape {}); "
                                  "sizes must be >= 0",
                                  i, shape[i], list(shape)));
}

void check_dim(const TensorView &t, int i, const char *what) {
  if (i < 0 || i >= t.rank)
    throw UserError(fmt::format("TensorView::{}: dim {} is out of range for "
                                "rank-{} tensor {}; the dim must be in [0, {})",
                                what, i, t.rank, t.to_string(), t.rank));
}

} // namespace

TensorView TensorView::contiguous(CUdeviceptr data, DType dtype,
                                  std::initializer_list<int64_t> shape) {
  return contiguous(data, dtype, std::span(shape.begin(), shape.size()));
}

TensorView TensorView::contiguous(CUdeviceptr data, DType dtype,
                                  std::span<const int64_t> shape) {
  check_shape(shape);
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.strides[i] = stride;
    stride *= shape[i] > 1 ? shape[i] : 1;
  }
  return t;
}

TensorView TensorView::strided(CUdeviceptr data, DType dtype,
                               std::span<const int64_t> shape,
                               std::span<const int64_t> strides) {
  check_shape(shape);
  if (strides.size() != shape.size())
    throw UserError(fmt::format("TensorView: {} strides {} given for rank-{} "
                                "shape {}; give one stride per dim",
                                strides.size(), list(strides), shape.size(),
                                list(shape)));
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  for (int i = 0; i < t.rank; ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  return t;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    n *= shape[i];
  return n;
}

int64_t TensorView::size(int i) const {
  check_dim(*this, i, "size");
  return shape[i];
}

int64_t TensorView::stride(int i) const {
  check_dim(*this, i, "stride");
  return strides[i];
}

bool TensorView::is_contiguous() const {
  if (numel() == 0)
    return true;
  int64_t expected = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (shape[i] == 1)
      continue;
    if (strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

std::string TensorView::to_string() const {
  std::size_t n = rank < 0 ? 0 : static_cast<std::size_t>(rank);
  if (n > kMaxRank)
    n = kMaxRank;
  return fmt::format("{}{} strides {}", name_of(dtype),
                     list(std::span(shape.data(), n)),
                     list(std::span(strides.data(), n)));
}

} // namespace tilejit::rt
