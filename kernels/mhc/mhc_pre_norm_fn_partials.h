// mhc_pre_norm_fn_partials.h - the split-K product of mHC's norm on the
// GPU: the partials (gemm_out_mul, gemm_out_sqrsum) that 2.1's
// mhc_reduce_partials_and_rmsnorm_fwd and mhc_pre_big_fuse_fwd take, which
// TileKernels 2.1 leaves to an external GEMM (tk21_ops.md §6.2); declared
// in mhc_pre_norm_fn_partials.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_pre_norm_fn_partials_op();

/// UserError unless fn (M3, K) has at most 32 rows (one tile of mixes) and
/// K = mhc H for the residual (T, mhc, H) (dims "mhc", "H", "M3", "K"): the
/// norm's product ops' shared rule.
void check_norm_fn_dims(const ops::Call &c);

/// Static parameters: `tokens` tokens (32 or 64) a block of 128 threads, a
/// split's columns in chunks of `chunk` (a power of two up to 128 dividing
/// the split), copied `stages` - 1 chunks ahead (0: loaded through
/// registers); x's squares summed column by column across the chunks
/// (`square_group` 1) or in groups of `square_group` columns in registers
/// each chunk (8: a thread's vector).
struct MhcNormFnSpec {
  int32_t chunk = 64;
  int32_t vector_bytes = 0; ///< 16: the residual's and fn's rows aligned
  int32_t stages = 2;
  int32_t tokens = 32;
  int32_t square_group = 1;
};
TILEJIT_SPEC_FIELDS(MhcNormFnSpec, chunk, vector_bytes, stages, tokens,
                    square_group)

/// The kernel in the DSL (mhc_pre_norm_fn_partials.dsl.cpp).
Kernel mhc_pre_norm_fn_partials_kernel(const MhcNormFnSpec &spec);

} // namespace tilejit::mhc
