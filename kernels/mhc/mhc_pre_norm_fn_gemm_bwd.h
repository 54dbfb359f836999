// mhc_pre_norm_fn_gemm_bwd.h - the GEMM half of mHC's norm backward on the
// GPU (what TileKernels 2.1 leaves to an external GEMM after
// mhc_reduce_partials_and_rmsnorm_bwd; moe_engram_mhc.md §3.3's bwd_mul);
// declared in mhc_pre_norm_fn_gemm_bwd.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_pre_norm_fn_gemm_bwd_op();

/// Static parameters: 128 threads a block; the x_grad kernel 64 tokens x 64
/// columns a block, the fn_grad kernel 64 columns a block over the tokens
/// in steps of 32.
struct MhcNormFnBwdSpec {
  int32_t accumulate = 1;   ///< x_grad given: added to
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MhcNormFnBwdSpec, accumulate, vector_bytes)

/// The kernels in the DSL (mhc_pre_norm_fn_gemm_bwd.dsl.cpp).
Kernel mhc_pre_norm_fn_x_grad_kernel(const MhcNormFnBwdSpec &spec);
Kernel mhc_pre_norm_fn_fn_grad_kernel(const MhcNormFnBwdSpec &spec);

} // namespace tilejit::mhc
