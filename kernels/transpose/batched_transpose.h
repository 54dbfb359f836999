// batched_transpose.h - out[b, y, x] = x[b, x, y] on the GPU
// (shared/specs/quant_transpose.md §14); the CPU reference is in
// reference.h.
#pragma once

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"
#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::transpose {

/// Static parameters of a batched_transpose kernel; also the bytewise key of
/// the op's kernel table (all 32-bit fields).
struct BatchedTransposeSpec {
  DType dtype = DType::bf16;
  int32_t block_x = 64; ///< input rows (output columns) of a tile
  int32_t block_y = 64; ///< input columns (output rows) of a tile
  /// Tiles a block transposes, side by side along y: all loaded before the
  /// first is transposed, so a block has more bytes in flight.
  int32_t tiles_y = 1;
  int32_t threads = 256;
  /// 16: both tensors' rows are 16-byte aligned (16-byte vector accesses).
  int32_t vector_bytes = 0;
};

/// out[b, y, x] = x[b, x, y] for a (B, X, Y) tensor `x` of a 1-, 2- or
/// 4-byte dtype with X % 64 == 0, Y % 64 == 0, unit last stride, a row
/// stride that is a multiple of 4 and a batch stride of X * row stride; `out`
/// is a contiguous (B, Y, X) tensor of the same dtype. Bit-exact. Nothing is
/// launched when a dimension is 0. Throws UserError naming the argument,
/// its value and the requirement; nothing is written then.
void batched_transpose(const rt::TensorView &x, const rt::TensorView &out,
                       CUstream stream = nullptr);

/// The 2-D form: (X, Y) -> (Y, X), through batched_transpose with B = 1.
void transpose(const rt::TensorView &x, const rt::TensorView &out,
               CUstream stream = nullptr);

/// The kernel batched_transpose launches for a `dtype` input with `y`
/// columns whose rows (and the output's) are 16-byte aligned or not: 64 x 64
/// tiles, 64 bytes a thread (4 tiles a block of 1-byte elements, 2 of 2-byte
/// ones) where the columns divide evenly.
BatchedTransposeSpec batched_transpose_spec(DType dtype, int64_t y,
                                            bool aligned);

rt::SpecKey batched_transpose_key(const BatchedTransposeSpec &spec);

/// The kernel in the DSL (batched_transpose.dsl.cpp).
Kernel batched_transpose_kernel(const BatchedTransposeSpec &spec);

} // namespace tilejit::transpose
