// top2_sum_gate.h - The MoE router on the GPU (shared/specs/moe_engram_mhc.md
// §1.4); declared in top2_sum_gate.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// Per token t of logits (T, E): scores p = f(logits) (sigmoid,
/// sqrtsoftplus, or softmax over the row), selection scores s = p + bias
/// (softmax: logits + bias); with num_groups != num_topk_groups only the
/// num_topk_groups groups of E / num_groups experts with the largest sums
/// of their top two s; then the num_topk largest s (ties to the lower
/// expert), weights p / (1e-20 + sum of the picks' p) * routed_scaling_factor,
/// shared experts E, E + 1, ... with weight 1, each slot's expert mapped to
/// a physical one (to_physical_map[l, (ep_rank + t * 23333) mod
/// logical_count[l]]) and masked to this TP rank (-1 elsewhere). Masked
/// tokens (mask false) get -1 and 0; fixed-routing tokens take their picks
/// from unmapped_topk_idx. topk_idx: i64 (T, K + S); topk_weights: f32
/// (T, K + S); unmapped_out: i64 (T, K), the picks (TileKernels writes them
/// into unmapped_topk_idx: pass that tensor as both). Bitwise equal to
/// top2_sum_gate_ref. Throws UserError naming the argument, its value and
/// the requirement; nothing is written then. Absent optional tensors:
/// ops::absent().
void top2_sum_gate(
    const rt::TensorView &logits, const rt::TensorView &bias,
    const rt::TensorView &mask, const rt::TensorView &fix_routing_mask,
    const rt::TensorView &to_physical_map, const rt::TensorView &logical_count,
    const rt::TensorView &unmapped_topk_idx, const rt::TensorView &topk_idx,
    const rt::TensorView &topk_weights, const rt::TensorView &unmapped_out,
    int64_t num_topk, int64_t num_topk_groups, int64_t num_groups,
    bool use_shared_as_routed, int64_t num_shared_experts,
    double routed_scaling_factor, int64_t ep_rank, int64_t num_ep_ranks,
    int64_t tp_rank, int64_t num_tp_ranks, const std::string &scoring_func,
    CUstream stream = nullptr);

const ops::OpDef &top2_sum_gate_op();

/// Static parameters of a top2_sum_gate kernel (the ranks, the scaling
/// factor and the map's width are run-time scalars).
struct Top2SumGateSpec {
  int32_t num_experts = 256;
  int32_t num_topk = 8;
  int32_t group_size = 32; ///< E / num_groups when grouping, else 0
  int32_t num_topk_groups = 4;
  int32_t num_shared = 0; ///< S (0 unless use_shared_as_routed)
  int32_t scoring = 0;    ///< ScoringFunc
  int32_t mask = 0, fix_routing = 0, physical_map = 0, unmapped_out = 0;
  int32_t block_t = 2;      ///< tokens (rows) a block
  int32_t threads = 32;     ///< one warp: every row reduces within it
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(Top2SumGateSpec, num_experts, num_topk, group_size,
                    num_topk_groups, num_shared, scoring, mask, fix_routing,
                    physical_map, unmapped_out, block_t, threads, vector_bytes)

/// The kernel in the DSL (top2_sum_gate.dsl.cpp).
Kernel top2_sum_gate_kernel(const Top2SumGateSpec &spec);

} // namespace tilejit::moe
