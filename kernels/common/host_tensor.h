// host_tensor.h - A small host tensor for the CPU references and tests:
// dtype, shape, strides (in elements), owning or viewing memory.
#pragma once

#include "tilejit/dtype.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tilejit::ref {

/// A strided host tensor. Copies share storage (like a torch tensor); use
/// `clone()` for a deep copy. Element access is checked against the dtype's
/// size and the shape, and throws UserError with the numbers.
///
///   HostTensor x = HostTensor::zeros(DType::f32, {4, 8});
///   x.at<float>({1, 2}) = 3.0f;
class HostTensor {
public:
  HostTensor() = default;

  /// Contiguous, owning, zero-filled.
  static HostTensor zeros(DType dtype, std::span<const int64_t> shape);
  static HostTensor zeros(DType dtype, std::initializer_list<int64_t> shape);
  /// Owning, zero-filled, with the given strides (any non-negative strides;
  /// the allocation covers the largest reachable offset).
  static HostTensor zeros_strided(DType dtype, std::span<const int64_t> shape,
                                  std::span<const int64_t> strides);
  /// A non-owning view of memory the caller keeps alive.
  static HostTensor view(void *data, DType dtype,
                         std::span<const int64_t> shape,
                         std::span<const int64_t> strides);
  /// A contiguous tensor holding a copy of `values` (sizeof(T) must match).
  template <class T>
  static HostTensor from(DType dtype, std::span<const int64_t> shape,
                         const std::vector<T> &values);

  DType dtype() const { return dtype_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const std::vector<int64_t> &shape() const { return shape_; }
  const std::vector<int64_t> &strides() const { return strides_; }
  int64_t size(int dim) const;
  int64_t stride(int dim) const;
  int64_t numel() const;
  bool is_contiguous() const;

  /// Element offset (in elements) of a multi-index; checked.
  int64_t offset(std::span<const int64_t> index) const;
  int64_t offset(std::initializer_list<int64_t> index) const {
    return offset(std::span<const int64_t>(index.begin(), index.size()));
  }

  /// Pointer to element [0, ..., 0]; sizeof(T) must equal the dtype's size.
  template <class T> T *data() const {
    check_element_size(sizeof(T));
    return reinterpret_cast<T *>(data_);
  }
  template <class T> T &at(std::initializer_list<int64_t> index) const {
    return data<T>()[offset(index)];
  }
  template <class T> T &at(std::span<const int64_t> index) const {
    return data<T>()[offset(index)];
  }
  std::byte *raw() const { return data_; }

  /// Deep copy, contiguous.
  HostTensor clone() const;
  /// Same storage, dims `a` and `b` swapped.
  HostTensor transposed(int a, int b) const;
  /// Same bytes, another dtype and shape; requires a contiguous tensor and
  /// the same number of bytes.
  HostTensor reinterpret(DType dtype, std::span<const int64_t> shape) const;

  /// `f32[4, 8] strides [8, 1]`
  std::string to_string() const;

private:
  void check_element_size(std::size_t bytes) const;

  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_, strides_;
  std::shared_ptr<std::byte[]> storage_;
  std::byte *data_ = nullptr;
};

[[noreturn]] void throw_count_mismatch(std::size_t values, const HostTensor &t);

template <class T>
HostTensor HostTensor::from(DType dtype, std::span<const int64_t> shape,
                            const std::vector<T> &values) {
  HostTensor t = zeros(dtype, shape);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw_count_mismatch(values.size(), t);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

/// Row-major strides of a shape.
std::vector<int64_t> contiguous_strides(std::span<const int64_t> shape);

/// `assert_equal` of the specs: same dtype and shape, same strides unless
/// either tensor is empty, identical bytes of every element. Returns "" when
/// equal, else a one-line description of the first difference.
std::string compare_exact(const HostTensor &actual, const HostTensor &expected,
                          bool check_strides = true);

/// The specs' `calc_diff`, in float64: sum((x-y)^2) / sum(x^2+y^2), 0 when
/// both are all zero. Accepts f32, f64, bf16, f16 tensors of one shape.
double calc_diff(const HostTensor &x, const HostTensor &y);

/// Element as double for any floating or integer dtype (bf16/f16/fp8 decoded
/// exactly).
double element_as_double(const HostTensor &t, std::span<const int64_t> index);

} // namespace tilejit::ref
