// tensor.h - TensorView: a non-owning view of a strided tensor in GPU memory.
#pragma once

#include "tilejit/dtype.h"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace tilejit::rt {

/// Describes a tensor in device memory: a pointer, an element type, and up to
/// kMaxRank sizes and strides. Strides count elements, not bytes, as in
/// PyTorch. Does not own the memory and needs no driver. Entries of `shape`
/// and `strides` at or past `rank` are unused (0).
struct TensorView {
  static constexpr int kMaxRank = 6;

  CUdeviceptr data = 0;
  DType dtype = DType::f32;
  int rank = 0;
  std::array<int64_t, kMaxRank> shape{};
  std::array<int64_t, kMaxRank> strides{};

  /// A row-major (C-contiguous) view: the last dim has stride 1.
  /// Throws UserError for a rank above kMaxRank or a negative size.
  static TensorView contiguous(CUdeviceptr data, DType dtype,
                               std::initializer_list<int64_t> shape);
  static TensorView contiguous(CUdeviceptr data, DType dtype,
                               std::span<const int64_t> shape);
  /// A view with explicit strides (in elements; any sign, 0 for broadcast).
  /// Throws UserError for a rank above kMaxRank, a negative size, or a
  /// stride count different from the rank.
  static TensorView strided(CUdeviceptr data, DType dtype,
                            std::span<const int64_t> shape,
                            std::span<const int64_t> strides);

  /// Product of the sizes: 1 for rank 0, 0 when any size is 0.
  int64_t numel() const;
  /// Size of dim `i`; throws UserError unless 0 <= i < rank.
  int64_t size(int i) const;
  /// Stride of dim `i` in elements; throws UserError unless 0 <= i < rank.
  int64_t stride(int i) const;
  /// True when the elements are dense in row-major order, as PyTorch decides
  /// it: strides of size-1 dims are ignored, and a view with no elements or
  /// of rank 0 is contiguous.
  bool is_contiguous() const;
  /// E.g. "bf16[4096, 7168] strides [7168, 1]"; rank 0: "f32[] strides []".
  std::string to_string() const;
};

} // namespace tilejit::rt
