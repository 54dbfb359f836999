// scale_copy.h - out = x * scale over a strided 2-D tensor: the foundation's
// proving kernel (element-wise work, tails, strides, the whole JIT path);
// declared in scale_copy.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::elementwise {

/// out[i, j] = x[i, j] * scale for a 2-D f32 tensor `x` with any
/// non-negative strides; `out` has x's shape and its own strides. Size 0 is a
/// no-op. Throws UserError naming the argument for a wrong dtype, rank, shape,
/// null or misaligned pointer; nothing is written then.
///
///   scale_copy(x, out, 2.0f, stream);
void scale_copy(const rt::TensorView &x, const rt::TensorView &out, float scale,
                CUstream stream = nullptr);

const ops::OpDef &scale_copy_op();

/// The static parameters a scale_copy kernel is specialised on (32-bit
/// fields: the bytewise key of the op's kernel table).
struct ScaleCopySpec {
  DType dtype = DType::f32;
  int32_t block_m = 32;  ///< rows of the tile one block handles
  int32_t block_n = 128; ///< columns of the tile one block handles
  int32_t threads = 256;
  /// 16: both tensors have unit inner stride and 16-byte aligned rows, and
  /// tiles move with 16-byte vector loads and stores; 0: element by element.
  int32_t vector_bytes = 0;
};
TILEJIT_SPEC_FIELDS(ScaleCopySpec, dtype, block_m, block_n, threads,
                    vector_bytes)

/// The kernel in the DSL (scale_copy.dsl.cpp).
Kernel scale_copy_kernel(const ScaleCopySpec &spec);

} // namespace tilejit::elementwise
