// get_fused_mapping.h - the token x slot <-> expert-major ("fused")
// position maps of MoE routing on the GPU (shared/specs/moe_engram_mhc.md
// §1.5); declared in get_fused_mapping.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// The fused layout of topk_idx (i64 (T, K), contiguous; -1 or an expert in
/// [0, num_experts)): expert e's segment starts at expert_start[e] = the sum
/// of align(count_e', alignment) over e' < e and holds its count_e entries
/// (t, k) in ascending flat order t * K + k, then padding up to
/// expert_end[e]; num_tokens_per_expert[e] = align(count_e, alignment).
/// Position p of an entry: pos_to_expert[p] = e, pos_to_token[p] = t,
/// pos_to_token_topk[p] = t * K + k and token_topk_to_pos[t, k] = p; every
/// other position, and token_topk_to_pos of a -1 slot, is -1. All i32:
/// pos_to_* (N,), token_topk_to_pos (T, K), the others (num_experts,). N
/// (the op's parameter num_expanded_tokens, here pos_to_expert's length)
/// must hold every segment (at least the sum of num_tokens_per_expert;
/// the op's num_expanded_tokens 0 makes it the upper bound align_down(T * K
/// + (alignment - 1) * num_experts, alignment)): positions past N are
/// dropped (token_topk_to_pos still names them), and an id outside [-1,
/// num_experts) counts as -1; neither can be checked without waiting for
/// the GPU. Bit-exact with
/// get_fused_mapping_ref (force_no_sync). Throws UserError naming the
/// argument, its value and the requirement; nothing is written then.
void get_fused_mapping(const rt::TensorView &topk_idx, int64_t num_experts,
                       int64_t alignment, const rt::TensorView &pos_to_expert,
                       const rt::TensorView &pos_to_token,
                       const rt::TensorView &pos_to_token_topk,
                       const rt::TensorView &token_topk_to_pos,
                       const rt::TensorView &expert_start,
                       const rt::TensorView &expert_end,
                       const rt::TensorView &num_tokens_per_expert,
                       CUstream stream = nullptr);

const ops::OpDef &get_fused_mapping_op();

/// Static parameters of the two kernels: `blocks` blocks of `threads`
/// threads; warp g of the grid takes a run of consecutive entries, in steps
/// of `per` sub-batches of 32 (a lane an entry); experts in `chunks` chunks
/// of `width` (a power of two from 8 to 32) columns.
struct FusedMappingSpec {
  int32_t experts = 32;
  int32_t width = 32;
  int32_t chunks = 1;
  int32_t blocks = 170;
  int32_t threads = 256;
  int32_t per = 4;
};
TILEJIT_SPEC_FIELDS(FusedMappingSpec, experts, width, chunks, blocks, threads,
                    per)

/// The kernels in the DSL (get_fused_mapping.dsl.cpp): each block's count
/// of each expert into the (blocks, chunks x width) scratch, and the
/// pos_to_* maps set to -1 (the first); the segments and every entry's
/// position from the counts (the second).
Kernel get_fused_mapping_count_kernel(const FusedMappingSpec &spec);
Kernel get_fused_mapping_place_kernel(const FusedMappingSpec &spec);

} // namespace tilejit::moe
