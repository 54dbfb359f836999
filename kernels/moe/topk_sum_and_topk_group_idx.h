// topk_sum_and_topk_group_idx.h - each token's expert groups ranked by the
// sum of their top one or two scores, the best num_topk_groups of them, on
// the GPU (shared/specs/moe_engram_mhc.md §1.2, §1.3); declared in
// topk_sum_and_topk_group_idx.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// group_idx[t, :] = the num_topk_groups groups of token t of the highest
/// score, best first, ties to the lower group: a group's score is its
/// largest score (num_topk_sum 1) or its two largest added in f32 (2; two
/// equal maxima count twice). scores: contiguous f32 (T, G, N), 1 <= G <=
/// 32, N <= 64, and G and N padded to powers of two (G to at least 4) at
/// most 1024 scores; group_idx: contiguous i64 (T, num_topk_groups). Bit-exact.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void topk_sum_and_topk_group_idx(const rt::TensorView &scores,
                                 int64_t num_topk_sum, int64_t num_topk_groups,
                                 const rt::TensorView &group_idx,
                                 CUstream stream = nullptr);

const ops::OpDef &topk_sum_and_topk_group_idx_op();

/// Static parameters of a topk_sum_and_topk_group_idx kernel: a block
/// ranks `rows` tokens' groups, padded to `groups` x `size` scores.
struct TopkGroupSpec {
  int32_t groups = 8; ///< G padded to a power of two, at least 4
  int32_t real_groups = 8;
  int32_t size = 32; ///< N padded to a power of two
  int32_t real_size = 32;
  int32_t sum = 2;      ///< num_topk_sum
  int32_t topk = 4;     ///< num_topk_groups
  int32_t out_cols = 4; ///< num_topk_groups padded to a power of two, >= 4
  int32_t rows = 32;    ///< tokens a block
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: every group's scores 16-byte aligned
};
TILEJIT_SPEC_FIELDS(TopkGroupSpec, groups, real_groups, size, real_size, sum,
                    topk, out_cols, rows, threads, vector_bytes)

/// The kernel in the DSL (topk_sum_and_topk_group_idx.dsl.cpp).
Kernel topk_sum_and_topk_group_idx_kernel(const TopkGroupSpec &spec);

} // namespace tilejit::moe
