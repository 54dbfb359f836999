// top2_sum_gate_args.h - The checked configuration of top2_sum_gate_ref
// (internal; split from top2_sum_gate_ref.cpp to keep each file small).
#pragma once

#include "moe/reference.h"

namespace tilejit::moe::detail {

/// The numbers top2_sum_gate_ref routes with, after every argument check.
struct Gate {
  int64_t tokens, experts, topk, groups, topk_groups;
  int64_t shared;   ///< S, 0 unless use_shared_as_routed
  int64_t extra;    ///< X, the columns of to_physical_map - 1 (0 without it)
  int64_t per_rank; ///< (E + X) / num_ep_ranks
  bool grouped;     ///< num_groups != num_topk_groups
  ScoringFunc scoring;
};

/// The checks of the numbers alone (num_topk, the groups, scoring_func,
/// the shared experts, the ranks; `g` holding tokens, experts, topk,
/// groups, topk_groups and extra), with messages starting `fn: `: fills in
/// g.scoring, g.shared, g.grouped and g.per_rank. The GPU op's checks too.
void check_gate(std::string_view fn, Gate &g, bool use_shared_as_routed,
                int64_t num_shared_experts, int64_t ep_rank,
                int64_t num_ep_ranks, int64_t tp_rank, int64_t num_tp_ranks,
                std::string_view scoring_func);

/// Checks every argument of top2_sum_gate_ref (same names and order, less
/// routed_scaling_factor) and throws UserError at the first bad one.
Gate check_top2_sum_gate_args(
    const HostTensor &logits, const HostTensor &bias, int64_t num_topk,
    int64_t num_topk_groups, int64_t num_groups, bool use_shared_as_routed,
    int64_t num_shared_experts, int64_t ep_rank, int64_t num_ep_ranks,
    int64_t tp_rank, int64_t num_tp_ranks, std::string_view scoring_func,
    const std::optional<HostTensor> &mask,
    const std::optional<HostTensor> &fix_routing_mask,
    const std::optional<HostTensor> &to_physical_map,
    const std::optional<HostTensor> &logical_count,
    const std::optional<HostTensor> &unmapped_topk_idx);

} // namespace tilejit::moe::detail
