// scale_copy.h - out = x * scale over a strided 2-D tensor: the foundation's
// proving kernel (element-wise work, tails, strides, the whole JIT path).
#pragma once

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"
#include "tilejit/runtime/tensor.h"

#include <cuda.h>

namespace tilejit::elementwise {

/// The static parameters a scale_copy kernel is specialised on. It is also
/// the key of the op's in-process kernel table, compared bytewise: every
/// field is a 32-bit value, so a field cannot be left out of the key.
struct ScaleCopySpec {
  DType dtype = DType::f32;
  int32_t block_m = 32;  ///< rows of the tile one block handles
  int32_t block_n = 128; ///< columns of the tile one block handles
  int32_t threads = 256;
  /// 16: both tensors have unit inner stride and 16-byte aligned rows, and
  /// tiles move with 16-byte vector loads and stores; 0: element by element.
  int32_t vector_bytes = 0;
};

/// out[i, j] = x[i, j] * scale for a 2-D f32 tensor `x` with any
/// non-negative strides; `out` has x's shape and its own strides. Size 0 is a
/// no-op. Throws UserError naming the argument for a wrong dtype, rank, shape,
/// null or misaligned pointer; nothing is written then.
///
///   scale_copy(x, out, 2.0f, stream);
void scale_copy(const rt::TensorView &x, const rt::TensorView &out, float scale,
                CUstream stream = nullptr);

/// The specialisation key of the kernel for `spec` (no shape: the sizes and
/// strides are run-time arguments).
rt::SpecKey scale_copy_key(const ScaleCopySpec &spec);

/// The kernel in the DSL (scale_copy.dsl.cpp).
Kernel scale_copy_kernel(const ScaleCopySpec &spec);

/// The CPU reference (scale_copy_ref.cpp) on host memory, same layout rules.
void scale_copy_ref(const float *x, const int64_t x_strides[2], float *out,
                    const int64_t out_strides[2], int64_t rows, int64_t cols,
                    float scale);

} // namespace tilejit::elementwise
