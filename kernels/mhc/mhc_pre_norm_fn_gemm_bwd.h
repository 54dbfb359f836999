// mhc_pre_norm_fn_gemm_bwd.h - the GEMM half of mHC's norm backward on the
// GPU (what TileKernels 2.1 leaves to an external GEMM after
// mhc_reduce_partials_and_rmsnorm_bwd; moe_engram_mhc.md §3.3's bwd_mul);
// declared in mhc_pre_norm_fn_gemm_bwd.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_pre_norm_fn_gemm_bwd_op();

/// Static parameters: 128 threads a block; the x_grad kernel x_tokens
/// tokens x 64 columns a block, the fn_grad kernel 64 columns a block over
/// a part of the tokens in steps of 64, then the parts' sum.
struct MhcNormFnBwdSpec {
  int32_t accumulate = 1;   ///< x_grad given: added to
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
  /// fn_grad: 0, each token step's tiles transposed through registers into
  /// shared memory; 1 to 3, copied that many stages ahead as they lie and
  /// multiplied transposed (the op's `stages`, default 2).
  int32_t stages = 2;
  /// 16: out_mul_grad's rows are 16-byte aligned (16-byte copies), else 4.
  int32_t mul_grad_bytes = 4;
  int32_t x_tokens = 64; ///< x_grad: tokens a block (of 64 columns)
  /// x_grad: 0, one tile of x_tokens tokens a block, its streams loaded
  /// into registers; n > 0, n steps of x_tokens tokens a block, fn's tile
  /// loaded once and each step's out_mul_grad, x and x_grad copied `stages`
  /// - 1 steps ahead (k.pipelined; at least 2 stages)
  int32_t x_steps = 0;
  /// fn_grad: the token steps in this many parts, a block each (their sums
  /// added in order by fn_grad_sum)
  int32_t fn_splits = 1;
  int32_t fn_grad_bytes = 0; ///< 16: fn_grad's rows 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MhcNormFnBwdSpec, accumulate, vector_bytes, stages,
                    mul_grad_bytes, x_tokens, x_steps, fn_splits, fn_grad_bytes)

/// The kernels in the DSL (mhc_pre_norm_fn_gemm_bwd.dsl.cpp).
Kernel mhc_pre_norm_fn_x_grad_kernel(const MhcNormFnBwdSpec &spec);
Kernel mhc_pre_norm_fn_fn_grad_kernel(const MhcNormFnBwdSpec &spec);
Kernel mhc_pre_norm_fn_fn_grad_sum_kernel(const MhcNormFnBwdSpec &spec);

} // namespace tilejit::mhc
