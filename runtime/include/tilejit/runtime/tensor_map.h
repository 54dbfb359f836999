// tensor_map.h - TMA descriptors (CUtensorMap) for tiles of a tensor.
#pragma once

#include "tilejit/runtime/tensor.h"

#include <cuda.h>

#include <cstdint>
#include <span>

namespace tilejit::rt {

/// A CUtensorMap for boxes of `box` elements (outermost dimension first, one
/// a dimension of `t`) of the strided view `t`, zero fill outside the
/// tensor, with the 128-byte swizzle WGMMA reads (`swizzle_bytes` 128) or
/// none (0: each box lands as a dense row-major tile). Requirements
/// (UserError naming `name` otherwise): rank 1 to 5, unit inner stride, a
/// 16-byte-aligned base, every other stride (of a dimension longer than 1)
/// a multiple of 16 bytes, sizes below 2^31 (the copies' coordinates are
/// 32-bit), box sides of 1 to 256 elements, a box row of a multiple of 16
/// bytes and, with swizzle, at most 128 bytes. A view without elements is
/// mapped as one element at its base (TMA takes no size 0): copies from it
/// must not run. Encoding takes about 0.05 us; the map is passed to the
/// kernel by value.
CUtensorMap encode_tensor_map(const TensorView &t, const char *name,
                              std::span<const int64_t> box,
                              int64_t swizzle_bytes);

} // namespace tilejit::rt
