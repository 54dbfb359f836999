// expand_to_fused.h - MoE tokens copied to their fused (expert-major)
// rows on the GPU, with or without their scales (shared/specs/
// moe_engram_mhc.md §1.6, §1.7); declared in expand_to_fused.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// out[p, :] = x[t, :] for every (t, k) with p = token_topk_to_pos[t, k] >=
/// 0, and out[p, :] = 0 for every p with pos_to_expert[p] < 0; rows with
/// pos_to_expert >= 0 that no (t, k) names are not written (as
/// TileKernels). x: (T, H) of any dtype, contiguous; token_topk_to_pos: i32
/// (T, K), contiguous, 1 <= K <= 32, each position named at most once;
/// pos_to_expert: i32 (N,); out: (N, H) of x's dtype. Bitwise copies.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void expand_to_fused(const rt::TensorView &x,
                     const rt::TensorView &token_topk_to_pos,
                     const rt::TensorView &pos_to_expert,
                     const rt::TensorView &out, CUstream stream = nullptr);

/// expand_to_fused of a quantized x = (x, x_sf) row by row: x as above,
/// x_sf f32 (T, ceil(H / num_per_channels)) or, with
/// use_tma_aligned_col_major_sf, i32 (T, ceil(ceil(H / num_per_channels) /
/// 4)) of packed UE8M0 bytes; out_sf (N, x_sf's columns), row-major, or
/// with use_tma_aligned_col_major_sf column-major with strides (1,
/// align(N, 4)).
void expand_to_fused_with_sf(
    const rt::TensorView &x, const rt::TensorView &x_sf,
    int64_t num_per_channels, const rt::TensorView &token_topk_to_pos,
    const rt::TensorView &pos_to_expert, bool use_tma_aligned_col_major_sf,
    const rt::TensorView &out, const rt::TensorView &out_sf,
    CUstream stream = nullptr);

const ops::OpDef &expand_to_fused_op();
const ops::OpDef &expand_to_fused_with_sf_op();

/// Static parameters of an expand kernel: a block takes one row of x
/// (block row b: token b and fused row b, the grid max(T, N) rows) and
/// block_h of its columns, and of the scales sf_block columns.
struct ExpandToFusedSpec {
  DType dtype = DType::bf16; ///< x's elements as copied (u8, bf16, i32, i64)
  int32_t topk = 8;
  int32_t block_h = 1024;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: x's and out's rows 16-byte aligned
  int32_t sf_block = 0;     ///< 0: no scales; else scale columns a block
  int32_t whole = 0; ///< 1: block_h divides H (x's columns promised inside)
};
TILEJIT_SPEC_FIELDS(ExpandToFusedSpec, dtype, topk, block_h, threads,
                    vector_bytes, sf_block, whole)

/// The kernel in the DSL (expand_to_fused.dsl.cpp).
Kernel expand_to_fused_kernel(const ExpandToFusedSpec &spec);

} // namespace tilejit::moe
