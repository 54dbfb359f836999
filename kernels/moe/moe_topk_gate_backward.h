// moe_topk_gate_backward.h - The gradient of TileKernels 2.1's MoE router
// on the GPU (shared/specs/tk21_ops.md §4.2); declared in
// moe_topk_gate_backward.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

const ops::OpDef &moe_topk_gate_backward_op();

/// Static parameters of a moe_topk_gate_backward kernel (the scaling
/// factor is a run-time scalar).
struct MoeTopkGateBackwardSpec {
  int32_t num_experts = 256;
  int32_t num_topk = 8;
  int32_t aux = 0;          ///< mask and grad_scores_sum given
  int32_t block_t = 1;      ///< tokens (rows) a block
  int32_t threads = 32;     ///< one warp: every row reduces within it
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MoeTopkGateBackwardSpec, num_experts, num_topk, aux,
                    block_t, threads, vector_bytes)

/// The kernel in the DSL (moe_topk_gate_backward.dsl.cpp).
Kernel moe_topk_gate_backward_kernel(const MoeTopkGateBackwardSpec &spec);

} // namespace tilejit::moe
