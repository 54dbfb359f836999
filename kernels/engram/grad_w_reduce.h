// grad_w_reduce.h - The Engram weight gradients' reduction on the GPU
// (shared/specs/moe_engram_mhc.md §2.5); declared in grad_w_reduce.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::engram {

const ops::OpDef &grad_w_reduce_op();

/// Static parameters: B partial rows, summed as 4 groups of B / 4 rows
/// (each in order, `unroll` rows a step), block_n columns of the flat
/// (hc * D) rows a block.
struct GradWReduceSpec {
  int32_t partials = 132; ///< B
  int32_t unroll = 1;     ///< divides B / 4
  int32_t block_n = 128;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: every row 16-byte aligned
  /// 0: a thread holds a column of every group (the groups' sum in the
  /// thread, 4-byte loads, 172 registers at unroll 11); 4: 4 columns of one
  /// group, a step's rows loaded before they are added (16-byte loads, 62
  /// registers). H100, 132x4x7168: 9.9 us at 0 (block_n 256, 256 threads),
  /// 7.9 at 4, 7.7 at 4 with block_n 128 and 128 threads (the defaults).
  int32_t group_vector = 4;
};
TILEJIT_SPEC_FIELDS(GradWReduceSpec, partials, unroll, block_n, threads,
                    vector_bytes, group_vector)

/// The kernel in the DSL (grad_w_reduce.dsl.cpp).
Kernel grad_w_reduce_kernel(const GradWReduceSpec &spec);

} // namespace tilejit::engram
