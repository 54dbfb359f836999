// reference.h - CPU references of the MoE gating and routing ops
// (shared/specs/moe_engram_mhc.md §1.0-§1.13, and tk21_ops.md §4 for 2.1's
// router), TileKernels names and argument order. Every function throws
// UserError on a bad argument, naming the function, the argument, the value
// and the requirement.
#pragma once

#include "common/host_tensor.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tilejit::moe {

using ref::HostTensor;

// --- §1.0 scoring functions ------------------------------------------------

enum class ScoringFunc {
  sigmoid = 0,
  sqrtsoftplus = 1,
  softmax = 2,
  identity = 3
};

/// 'sigmoid', 'sqrtsoftplus', 'softmax' or 'identity', in any case;
/// nullopt for anything else.
std::optional<ScoringFunc> parse_scoring_func(std::string_view name);
/// 1 / (1 + expf(-x)), IEEE float32 division; expf is CUDA's
/// (ref::cuda_expf), as below.
float sigmoid_score(float x);
/// sqrtf(softplus(x)) with softplus(x) = x > 20 ? x : log1pf(expf(x))
/// (CUDA's log1pf, ref::cuda_log1pf).
float sqrtsoftplus_score(float x);
/// expf(x - max) / sum over one row; the sum is float32 in a warp's order:
/// 32 lanes each adding its 4-element chunks (4l + 128j ..) in order, then
/// an xor butterfly at distances 1, 2, 4, 8, 16.
std::vector<float> softmax_scores(std::span<const float> logits);

// --- §1.1-§1.4 selection -----------------------------------------------------

/// i64 (T, num_topk): per row, the indices of the num_topk largest fp32
/// scores in descending order, equal scores -> smaller index first (a stable
/// descending sort). Every index appears at most once, -inf included; NaN
/// ranks above +inf (torch.sort's order).
///   topk_gate_ref(scores{[1, 3, 3, 0]}, 2) -> [[1, 2]]
HostTensor topk_gate_ref(const HostTensor &scores, int64_t num_topk);

/// i64 (T, num_topk_groups): scores is fp32 (T, G, E/G); group score = the
/// group's max (num_topk_sum 1) or max + second max (2, duplicates count
/// twice); groups listed by descending score, ties -> lower group first.
HostTensor topk_sum_and_topk_group_idx_ref(const HostTensor &scores,
                                           int64_t num_topk_sum,
                                           int64_t num_topk_groups);

struct Top2SumGateResult {
  HostTensor topk_idx;     ///< i64 (T, K + S), physical, EP/TP-masked, -1
  HostTensor topk_weights; ///< f32 (T, K + S)
};

/// The main router (§1.4). `unmapped_topk_idx`, when given, is written in
/// place (a HostTensor copy shares the caller's storage). See the spec for
/// the nine steps; scoring_func is 'sigmoid', 'sqrtsoftplus' or 'softmax'.
Top2SumGateResult top2_sum_gate_ref(
    const HostTensor &logits, const HostTensor &bias, int64_t num_topk,
    int64_t num_topk_groups, int64_t num_groups, bool use_shared_as_routed,
    int64_t num_shared_experts, float routed_scaling_factor, int64_t ep_rank,
    int64_t num_ep_ranks, int64_t tp_rank, int64_t num_tp_ranks,
    std::string_view scoring_func,
    const std::optional<HostTensor> &mask = std::nullopt,
    const std::optional<HostTensor> &fix_routing_mask = std::nullopt,
    const std::optional<HostTensor> &to_physical_map = std::nullopt,
    const std::optional<HostTensor> &logical_count = std::nullopt,
    const std::optional<HostTensor> &unmapped_topk_idx = std::nullopt);

// --- TileKernels 2.1's router (tk21_ops.md §4.0-§4.2) ----------------------

/// moe_topk_gate_forward's optional arguments (TileKernels' names; bool
/// tensors (T,), f32 vectors (E,)). `unmapped_topk_idx` (i64 (T, K)) is
/// written in place (a HostTensor copy shares the caller's storage), and
/// read for fixed-routing tokens.
struct MoeTopkGateArgs {
  std::optional<HostTensor> mask, bias, image_bias, image_token_mask,
      fix_routing_mask, to_physical_map, logical_count, unmapped_topk_idx,
      force_random;
};

struct MoeTopkGateResult {
  HostTensor topk_idx;     ///< i64 (T, K + S): routed, then shared; physical
  HostTensor topk_weights; ///< f32 (T, K + S)
  HostTensor scores;       ///< f32 (T, E): the unbiased scores, 0 if masked
};

/// TileKernels 2.1's router: u = sqrtsoftplus(logits) (f32 (T, E), E a
/// multiple of 4, finite), the top num_topk of u + bias (image_bias for image
/// tokens), ties to the lower expert (or the fixed-routing token's
/// unmapped_topk_idx), weights u_k / (butterfly sum of the u_k + 1e-20) *
/// routed_scaling_factor, then shared experts E, E + 1 (weight 1), then the
/// physical map; masked tokens -1 / 0. scoring_func must be 'sqrtsoftplus';
/// force_random is refused (its cuRAND draws are not reproduced).
MoeTopkGateResult
moe_topk_gate_forward_ref(const HostTensor &logits, int64_t num_topk,
                          bool use_shared_as_routed, int64_t num_shared_experts,
                          float routed_scaling_factor, int64_t ep_rank,
                          std::string_view scoring_func = "sqrtsoftplus",
                          const MoeTopkGateArgs &args = {});

/// f32 (T, E): the gradient of the logits, computed in float64 as
/// TileKernels' torch reference does (tk21_ops.md §4.2): scores (the
/// forward's u), topk_idx i64 (T, K) of routed experts (-1: unused),
/// topk_weights and grad_topk_weights f32 (T, K); mask (bool (T,)) and
/// grad_scores_sum (f32 (Sq, E), Sq dividing T) together or not at all.
HostTensor moe_topk_gate_backward_ref(
    const HostTensor &scores, const HostTensor &topk_idx,
    const HostTensor &topk_weights, const HostTensor &grad_topk_weights,
    float routed_scaling_factor, std::string_view scoring_func = "sqrtsoftplus",
    const std::optional<HostTensor> &mask = std::nullopt,
    const std::optional<HostTensor> &grad_scores_sum = std::nullopt);

// --- §1.5-§1.8 the fused (expert-major) layout -------------------------------

struct FusedMapping {
  HostTensor pos_to_expert;         ///< i32 (N,), -1 on padding
  HostTensor pos_to_token;          ///< i32 (N,), -1 on padding
  HostTensor pos_to_token_topk;     ///< i32 (N,), t*K+k, -1 on padding
  HostTensor token_topk_to_pos;     ///< i32 (T, K), -1 where topk_idx is -1
  HostTensor expert_start;          ///< i32 (E,)
  HostTensor expert_end;            ///< i32 (E,)
  HostTensor num_tokens_per_expert; ///< i32 (E,), aligned counts
  /// The aligned counts on the host; empty unless N was computed (the
  /// original's sync path: num_expanded_tokens == 0 and not force_no_sync).
  std::vector<int64_t> num_tokens_per_expert_list;
};

/// Expert e owns positions [start_e, start_e + align(count_e, alignment)):
/// its (t, k) entries first, in ascending t*K+k order, then padding.
/// num_expanded_tokens 0 (without force_no_sync) means "exactly the size
/// needed"; otherwise it must be at least that size (the tail is padding).
FusedMapping get_fused_mapping_ref(const HostTensor &topk_idx,
                                   int64_t num_experts,
                                   int64_t num_expanded_tokens,
                                   int64_t alignment,
                                   bool force_no_sync = false);

/// x.dtype (N, H): out[p] = x[t] for every p = token_topk_to_pos[t, k] >= 0,
/// every other row zero.
HostTensor expand_to_fused_ref(const HostTensor &x,
                               const HostTensor &token_topk_to_pos,
                               const HostTensor &pos_to_expert);

struct ExpandToFusedWithSfResult {
  HostTensor out;    ///< data.dtype (N, H)
  HostTensor out_sf; ///< sf.dtype (N, hidden_sf); strides (1, align(N, 4))
                     ///< when use_tma_aligned_col_major_sf
};

/// expand_to_fused applied to x = (data, sf) row by row. sf is f32
/// (T, ceil(H/npc)) or i32 (T, ceil(ceil(H/npc)/4)) (packed UE8M0, which
/// requires use_tma_aligned_col_major_sf).
ExpandToFusedWithSfResult expand_to_fused_with_sf_ref(
    const std::pair<HostTensor, HostTensor> &x, int64_t num_per_channels,
    const HostTensor &token_topk_to_pos, const HostTensor &pos_to_expert,
    bool use_tma_aligned_col_major_sf = false);

/// Per token t and column i, in this order: acc = 0; for k ascending with
/// p >= 0: acc = fma(x[p, i], w[t, k] (* x_sf[p]), acc); y = acc (* sf[0]);
/// out = y converted to x.dtype, or to e4m3 (saturating) when fp8_format is
/// "e4m3". x is f32/bf16 (N, H) with H % 256 == 0, or the pair (x, x_sf).
/// When `out` is given, the result is written into it and it is returned.
HostTensor reduce_fused_ref(
    const std::variant<HostTensor, std::pair<HostTensor, HostTensor>> &x,
    const std::optional<HostTensor> &topk_weights,
    const HostTensor &token_topk_to_pos, std::string_view fp8_format = "",
    const std::optional<HostTensor> &sf = std::nullopt,
    const std::optional<HostTensor> &out = std::nullopt);

// --- §1.9-§1.13 small ops ----------------------------------------------------

struct NormalizeWeightResult {
  HostTensor denominator; ///< f32 (T,): 1e-20f + w[0] + ... + w[K-1]
  HostTensor normalized;  ///< f32 (T, K): w / denominator
};

NormalizeWeightResult normalize_weight_ref(const HostTensor &topk_weights);

/// i32 (num_groups,): occurrences of each id in the i64 (T, K) group_idx;
/// -1 is ignored.
HostTensor group_count_ref(const HostTensor &group_idx, int64_t num_groups);

/// f32 (E,): fi[e] = count[e] * E / (T * num_aux_topk), zeros when T == 0.
HostTensor aux_fi_ref(const HostTensor &topk_idx, int64_t num_experts,
                      int64_t num_aux_topk);

/// Same dtype (i32 or i64) and shape: keeps the experts of the EP ranks
/// r with r % num_tp_ranks == tp_rank, renumbered compactly; -1 elsewhere.
HostTensor mask_indices_by_tp_ref(const HostTensor &indices, int64_t n,
                                  int64_t num_ep_ranks, int64_t tp_rank,
                                  int64_t num_tp_ranks);

/// In place, per row of the i64 (T, K) tensor: an id >= 0 seen earlier in
/// the row becomes -1 (the first occurrence stays); negative ids stay.
void inplace_unique_group_indices_ref(HostTensor &group_indices,
                                      int64_t num_groups);

} // namespace tilejit::moe
