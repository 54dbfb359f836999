// batched_transpose.h - out[b, y, x] = x[b, x, y] on the GPU
// (shared/specs/quant_transpose.md §14), and its 2-D form transpose;
// declared in batched_transpose.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::transpose {

/// out[b, y, x] = x[b, x, y] for a (B, X, Y) tensor `x` of a 1-, 2- or
/// 4-byte dtype with X % 64 == 0, Y % 64 == 0, unit last stride, a row
/// stride that is a multiple of 4 and a batch stride of X * row stride; `out`
/// is a contiguous (B, Y, X) tensor of the same dtype. Bit-exact. Nothing is
/// launched when a dimension is 0. Throws UserError naming the argument,
/// its value and the requirement; nothing is written then.
void batched_transpose(const rt::TensorView &x, const rt::TensorView &out,
                       CUstream stream = nullptr);

/// The 2-D form: (X, Y) -> (Y, X), the same kernel with B = 1.
void transpose(const rt::TensorView &x, const rt::TensorView &out,
               CUstream stream = nullptr);

const ops::OpDef &batched_transpose_op();
const ops::OpDef &transpose_op();

/// Static parameters of a transpose kernel (32-bit fields: the bytewise key
/// of the op's kernel table).
struct BatchedTransposeSpec {
  DType dtype = DType::bf16;
  int32_t block_x = 64; ///< input rows (output columns) of a tile
  int32_t block_y = 64; ///< input columns (output rows) of a tile
  /// Tiles a block transposes, side by side along y: all loaded before the
  /// first is transposed, so a block has more bytes in flight (or, with
  /// `tma_stages`, one after another through the pipeline).
  int32_t tiles_y = 1;
  int32_t threads = 256;
  /// 16: both tensors' rows are 16-byte aligned (16-byte vector accesses).
  int32_t vector_bytes = 0;
  /// 0: tiles are loaded into registers. 2 or more (with vector_bytes 16):
  /// a block's tiles come through a pipeline of that many stages of shared
  /// memory, each tile one TMA copy. The op does not take it: at 8 x 4032 x
  /// 7168 its best variants ran within 1.1% of the register kernel on an
  /// H100 (`tilejit_bench --tma-transpose`, session 54), most slower.
  int32_t tma_stages = 0;
};
TILEJIT_SPEC_FIELDS(BatchedTransposeSpec, dtype, block_x, block_y, tiles_y,
                    threads, vector_bytes, tma_stages)

/// The spec of the TMA form for rows 16-byte aligned: `tiles` tiles of
/// block_x x block_y a block through `stages` stages, `threads` a block.
inline BatchedTransposeSpec
batched_transpose_tma_spec(DType dtype, int32_t stages, int32_t tiles,
                           int32_t threads, int32_t block_x = 64,
                           int32_t block_y = 64) {
  return {.dtype = dtype,
          .block_x = block_x,
          .block_y = block_y,
          .tiles_y = tiles,
          .threads = threads,
          .vector_bytes = 16,
          .tma_stages = stages};
}

/// The kernel in the DSL (batched_transpose.dsl.cpp).
Kernel batched_transpose_kernel(const BatchedTransposeSpec &spec);

} // namespace tilejit::transpose
