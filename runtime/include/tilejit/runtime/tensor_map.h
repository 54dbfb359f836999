// tensor_map.h - TMA descriptors (CUtensorMap) for 2-D tiles of a tensor.
#pragma once

#include "tilejit/runtime/tensor.h"

#include <cuda.h>

#include <cstdint>

namespace tilejit::rt {

/// A CUtensorMap for boxes of box_rows x box_cols elements of the 2-D
/// row-major view `t` (unit inner stride), with 128-byte swizzle when
/// `swizzle_128b` (the layout WGMMA reads) and zero fill outside the tensor.
/// Requirements (UserError naming `name` otherwise): a 16-byte-aligned base,
/// a row stride in bytes that is a multiple of 16, box sides of 1 to 256
/// elements and, with swizzle, a box row of at most 128 bytes. Encoding
/// takes about 0.05 us; the map is passed to the kernel by value.
CUtensorMap encode_tensor_map_2d(const TensorView &t, const char *name,
                                 uint32_t box_rows, uint32_t box_cols,
                                 bool swizzle_128b);

} // namespace tilejit::rt
