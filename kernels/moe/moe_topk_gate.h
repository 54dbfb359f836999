// moe_topk_gate.h - TileKernels 2.1's MoE router on the GPU
// (shared/specs/tk21_ops.md §4.1); declared in moe_topk_gate.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

const ops::OpDef &moe_topk_gate_forward_op();

/// Static parameters of a moe_topk_gate_forward kernel (the scaling factor
/// and the EP rank are run-time scalars).
struct MoeTopkGateSpec {
  int32_t num_experts = 256;
  int32_t num_topk = 8;
  int32_t num_shared = 0; ///< S (0 unless use_shared_as_routed)
  int32_t mask = 0, bias = 0, image = 0, fix_routing = 0, physical_map = 0;
  int32_t unmapped_out = 0, scores = 0;
  int32_t block_t = 1;      ///< tokens (rows) a block
  int32_t threads = 32;     ///< one warp: every row reduces within it
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(MoeTopkGateSpec, num_experts, num_topk, num_shared, mask,
                    bias, image, fix_routing, physical_map, unmapped_out,
                    scores, block_t, threads, vector_bytes)

/// The kernel in the DSL (moe_topk_gate.dsl.cpp).
Kernel moe_topk_gate_kernel(const MoeTopkGateSpec &spec);

} // namespace tilejit::moe
