// unpack_e2m1.h - unpack_from_e2m1fn_x2 (shared/specs/quant_transpose.md
// §13) on the GPU: packed fp4 bytes to floats; declared in unpack_e2m1.cpp,
// the CPU reference is unpack_from_e2m1fn_x2_ref in reference.h.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::quant {

/// Decodes packed fp4 e2m1 codes: x int8 or uint8 (..., n), contiguous, ndim
/// >= 1; out (..., 2n) f32, f16 or bf16, contiguous, out[..., 2j] from the
/// low nibble of x[..., j] and out[..., 2j + 1] from the high one, exactly
/// (code 8 is -0.0). Throws UserError naming the argument, its value and
/// the requirement; nothing is written then.
void unpack_from_e2m1fn_x2(const rt::TensorView &x, const rt::TensorView &out,
                           CUstream stream = nullptr);

const ops::OpDef &unpack_from_e2m1fn_x2_op();

/// Static parameters of an unpack_from_e2m1fn_x2 kernel.
struct UnpackE2m1Spec {
  DType out_dtype = DType::f32;
  int32_t threads = 256;
  int32_t bytes_per_thread = 8; ///< of x: 16 output values a thread
  int32_t vector_bytes = 0;     ///< 16: both tensors 16-byte aligned
};
TILEJIT_SPEC_FIELDS(UnpackE2m1Spec, out_dtype, threads, bytes_per_thread,
                    vector_bytes)

/// The kernel in the DSL (unpack_e2m1.dsl.cpp).
Kernel unpack_e2m1_kernel(const UnpackE2m1Spec &spec);

} // namespace tilejit::quant
