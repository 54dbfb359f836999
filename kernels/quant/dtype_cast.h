// dtype_cast.h - TileKernels 2.1's element-wise quant.cast (op name "cast";
// shared/specs/tk21_ops.md §3.1), with or without stochastic rounding
// (§2.2, in software on sm_90a); declared in
// dtype_cast.cpp, the CPU reference is dtype_cast_ref in reference.h. (The
// file is not cast.cpp: cast_ref.cpp is the torch reference's `cast`.)
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::quant {

/// out = x.to(out.dtype) element by element, for contiguous x and out of the
/// same shape, each f32, bf16 or e4m3: widening exactly, narrowing to
/// nearest even, e4m3 saturating to +-448 (NaN stays NaN). Size 0 is a no-op.
/// With `stochastic_rounding` (f32 to bf16 or e4m3, bf16 to e4m3; numel a
/// multiple of 4) each quad of elements rounds with TileKernels 2.1's random
/// words (a hash of the quad's values and index, §2.2), 16 bits an element,
/// to the neighbour away from zero with probability (discarded fraction) to
/// 2^-16: Blackwell's cvt.rs in software (stochastic_cast_ref), so not
/// bit-identical to a Blackwell run; a NaN gives the hardware's NaN.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void cast(const rt::TensorView &x, const rt::TensorView &out,
          bool stochastic_rounding = false, CUstream stream = nullptr);

const ops::OpDef &cast_op();

/// Static parameters of a cast kernel.
struct DtypeCastSpec {
  DType in_dtype = DType::f32;
  DType out_dtype = DType::bf16;
  int32_t threads = 256;
  /// Elements a thread: one 32-byte access of the wider dtype (as the
  /// original)
  int32_t per_thread = 8;
  int32_t vector_bytes = 0; ///< 16: both tensors 16-byte aligned
  int32_t stochastic = 0;   ///< 1: stochastic rounding (§2.2)
  /// 1: stochastic e4m3's codes below the normals from a float multiply
  /// and conversion (stochastic_dsl.h's step, `convert`)
  int32_t stochastic_convert = 0;
};
TILEJIT_SPEC_FIELDS(DtypeCastSpec, in_dtype, out_dtype, threads, per_thread,
                    vector_bytes, stochastic, stochastic_convert)

/// The kernel in the DSL (dtype_cast.dsl.cpp).
Kernel dtype_cast_kernel(const DtypeCastSpec &spec);

} // namespace tilejit::quant
