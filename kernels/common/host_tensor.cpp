// host_tensor.cpp - The host tensor of the CPU references.
#include "common/host_tensor.h"

#include "common/convert.h"

#include "tilejit/error.h"

#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::ref {

std::vector<int64_t> contiguous_strides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

static void check_shape(std::span<const int64_t> shape) {
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      throw UserError(fmt::format("HostTensor: dim {} has size {} (shape "
                                  "[{}]); sizes must be >= 0",
                                  i, shape[i], fmt::join(shape, ", ")));
}

/// Sizes >= 0 and one stride per dim.
static void check_layout(std::span<const int64_t> shape,
                         std::span<const int64_t> strides) {
  check_shape(shape);
  if (shape.size() != strides.size())
    throw UserError(fmt::format("HostTensor: {} strides for rank-{} shape; "
                                "give one stride per dim",
                                strides.size(), shape.size()));
}

HostTensor HostTensor::zeros(DType dtype, std::span<const int64_t> shape) {
  check_shape(shape);
  std::vector<int64_t> strides = contiguous_strides(shape);
  return zeros_strided(dtype, shape, strides);
}

HostTensor HostTensor::zeros(DType dtype,
                             std::initializer_list<int64_t> shape) {
  return zeros(dtype, std::span<const int64_t>(shape.begin(), shape.size()));
}

HostTensor HostTensor::zeros_strided(DType dtype,
                                     std::span<const int64_t> shape,
                                     std::span<const int64_t> strides) {
  check_layout(shape, strides);
  int64_t span = 1, numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (strides[i] < 0)
      throw UserError(fmt::format("HostTensor: stride[{}] = {}; strides must "
                                  "be >= 0",
                                  i, strides[i]));
    numel *= shape[i];
    if (shape[i] > 0)
      span += (shape[i] - 1) * strides[i];
  }
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.strides_.assign(strides.begin(), strides.end());
  size_t bytes = static_cast<size_t>(numel == 0 ? 1 : span) * size_of(dtype);
  t.storage_ = std::shared_ptr<std::byte[]>(new std::byte[bytes]());
  t.data_ = t.storage_.get();
  return t;
}

HostTensor HostTensor::view(void *data, DType dtype,
                            std::span<const int64_t> shape,
                            std::span<const int64_t> strides) {
  check_layout(shape, strides);
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.strides_.assign(strides.begin(), strides.end());
  t.data_ = static_cast<std::byte *>(data);
  return t;
}

void throw_count_mismatch(std::size_t values, const HostTensor &t) {
  throw UserError(fmt::format("HostTensor::from: {} values for {} ({} "
                              "elements)",
                              values, t.to_string(), t.numel()));
}

int64_t HostTensor::size(int dim) const {
  if (dim < 0 || dim >= rank())
    throw UserError(fmt::format("HostTensor::size: dim {} of {}; the dim must "
                                "be in [0, {})",
                                dim, to_string(), rank()));
  return shape_[dim];
}

int64_t HostTensor::stride(int dim) const {
  if (dim < 0 || dim >= rank())
    throw UserError(fmt::format("HostTensor::stride: dim {} of {}; the dim "
                                "must be in [0, {})",
                                dim, to_string(), rank()));
  return strides_[dim];
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t s : shape_)
    n *= s;
  return n;
}

bool HostTensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = rank(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != expected)
      return numel() == 0;
    expected *= shape_[i];
  }
  return true;
}

int64_t HostTensor::offset(std::span<const int64_t> index) const {
  if (static_cast<int>(index.size()) != rank())
    throw UserError(fmt::format("HostTensor: {} indices for {}", index.size(),
                                to_string()));
  int64_t off = 0;
  for (int i = 0; i < rank(); ++i) {
    if (index[i] < 0 || index[i] >= shape_[i])
      throw UserError(fmt::format("HostTensor: index [{}] is outside {}",
                                  fmt::join(index, ", "), to_string()));
    off += index[i] * strides_[i];
  }
  return off;
}

void HostTensor::check_element_size(std::size_t bytes) const {
  if (bytes != size_of(dtype_))
    throw UserError(fmt::format("HostTensor: element access of {} bytes to "
                                "{}; the dtype's elements have {} bytes",
                                bytes, to_string(), size_of(dtype_)));
}

/// Calls fn(index) for every multi-index in row-major order.
template <class Fn>
static void for_each_index(const std::vector<int64_t> &shape, Fn &&fn) {
  for (int64_t s : shape)
    if (s == 0)
      return;
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(std::span<const int64_t>(index));
    int d = static_cast<int>(shape.size()) - 1;
    while (d >= 0 && ++index[d] == shape[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

HostTensor HostTensor::clone() const {
  HostTensor out = zeros(dtype_, shape_);
  size_t bytes = size_of(dtype_);
  int64_t i = 0;
  for_each_index(shape_, [&](std::span<const int64_t> index) {
    std::memcpy(out.data_ + (i++) * bytes, data_ + offset(index) * bytes,
                bytes);
  });
  return out;
}

HostTensor HostTensor::transposed(int a, int b) const {
  size(a), size(b); // range checks
  HostTensor t = *this;
  std::swap(t.shape_[a], t.shape_[b]);
  std::swap(t.strides_[a], t.strides_[b]);
  return t;
}

HostTensor HostTensor::reinterpret(DType dtype,
                                   std::span<const int64_t> shape) const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  if (!is_contiguous() || n * static_cast<int64_t>(size_of(dtype)) !=
                              numel() * static_cast<int64_t>(size_of(dtype_)))
    throw UserError(fmt::format("HostTensor::reinterpret: {} as {}[{}]; "
                                "requires a contiguous tensor of the same "
                                "byte size",
                                to_string(), name_of(dtype),
                                fmt::join(shape, ", ")));
  HostTensor t = *this;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.strides_ = contiguous_strides(shape);
  return t;
}

std::string HostTensor::to_string() const {
  return fmt::format("{}[{}] strides [{}]", name_of(dtype_),
                     fmt::join(shape_, ", "), fmt::join(strides_, ", "));
}

double element_as_double(const HostTensor &t, std::span<const int64_t> index) {
  const std::byte *p = t.raw() + t.offset(index) * size_of(t.dtype());
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype()) {
  case DType::f32:
    return load(float{});
  case DType::f64:
    return load(double{});
  case DType::f16:
    return f16_to_f32(load(uint16_t{}));
  case DType::bf16:
    return bf16_to_f32(load(uint16_t{}));
  case DType::e4m3:
    return e4m3_to_f32(load(uint8_t{}));
  case DType::e5m2:
    return e5m2_to_f32(load(uint8_t{}));
  case DType::i8:
    return load(int8_t{});
  case DType::u8:
    return load(uint8_t{});
  case DType::boolean:
    return load(uint8_t{}) != 0;
  case DType::i32:
    return load(int32_t{});
  case DType::u32:
    return load(uint32_t{});
  case DType::i64:
    return static_cast<double>(load(int64_t{}));
  case DType::u64:
    return static_cast<double>(load(uint64_t{}));
  }
  return 0;
}

std::string compare_exact(const HostTensor &actual, const HostTensor &expected,
                          bool check_strides) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return fmt::format("got {}, expected {}", actual.to_string(),
                       expected.to_string());
  if (check_strides && actual.numel() > 0 && expected.numel() > 0 &&
      actual.strides() != expected.strides())
    return fmt::format("got strides of {}, expected {}", actual.to_string(),
                       expected.to_string());
  size_t bytes = size_of(actual.dtype());
  // Both dense: one memcmp decides, and only a difference is looked for
  // element by element.
  if (actual.numel() == 0 ||
      (actual.is_contiguous() && expected.is_contiguous() &&
       std::memcmp(actual.raw(), expected.raw(), actual.numel() * bytes) == 0))
    return "";
  std::string diff;
  for_each_index(actual.shape(), [&](std::span<const int64_t> index) {
    if (!diff.empty())
      return;
    const std::byte *a = actual.raw() + actual.offset(index) * bytes;
    const std::byte *e = expected.raw() + expected.offset(index) * bytes;
    if (std::memcmp(a, e, bytes) != 0)
      diff =
          fmt::format("first difference at [{}]: {} vs {} in {}",
                      fmt::join(index, ", "), element_as_double(actual, index),
                      element_as_double(expected, index), actual.to_string());
  });
  return diff;
}

double calc_diff(const HostTensor &x, const HostTensor &y) {
  if (x.shape() != y.shape())
    throw UserError(fmt::format("calc_diff: {} and {} differ in shape",
                                x.to_string(), y.to_string()));
  double num = 0, den = 0;
  for_each_index(x.shape(), [&](std::span<const int64_t> index) {
    double a = element_as_double(x, index), b = element_as_double(y, index);
    num += (a - b) * (a - b);
    den += a * a + b * b;
  });
  return den == 0 ? 0.0 : num / den;
}

} // namespace tilejit::ref
