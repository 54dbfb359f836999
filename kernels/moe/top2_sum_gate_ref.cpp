// top2_sum_gate_ref.cpp - CPU reference of top2_sum_gate, the main router
// (spec §1.4): score, group-limit, pick the top K, normalise, add shared
// experts, map logical -> physical, mask by EP/TP rank.
#include "moe/check.h"
#include "moe/reference.h"
#include "moe/routing.h"
#include "moe/top2_sum_gate_args.h"

#include <cmath>
#include <numeric>

namespace tilejit::moe {

namespace {

constexpr std::string_view fn = "top2_sum_gate_ref";
using detail::Gate;

/// Steps 2-3: unbiased scores p and the K picks (selection order).
void select(const Gate &g, const float *logit, const float *bias,
            std::vector<float> &p, std::vector<int64_t> &sel, bool fixed) {
  std::vector<float> s(g.experts);
  if (g.scoring == ScoringFunc::softmax) {
    p = softmax_scores(std::span<const float>(logit, g.experts));
    // Softmax ranks on the biased logits, not the probabilities (§7.1).
    for (int64_t e = 0; e < g.experts; ++e)
      s[e] = logit[e] + bias[e];
  } else {
    for (int64_t e = 0; e < g.experts; ++e) {
      p[e] = g.scoring == ScoringFunc::sigmoid ? sigmoid_score(logit[e])
                                               : sqrtsoftplus_score(logit[e]);
      s[e] = p[e] + bias[e];
    }
  }
  if (fixed)
    return;
  std::vector<int64_t> candidates;
  if (g.grouped) {
    const int64_t size = g.experts / g.groups;
    for (int64_t group :
         detail::rank_groups(s, g.groups, size, 2, g.topk_groups))
      for (int64_t e = group * size; e < (group + 1) * size; ++e)
        candidates.push_back(e);
  } else {
    candidates.resize(g.experts);
    std::iota(candidates.begin(), candidates.end(), 0);
  }
  std::sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
    return detail::ranks_before(s[a], a, s[b], b);
  });
  sel.assign(candidates.begin(), candidates.begin() + g.topk);
}

} // namespace

Top2SumGateResult top2_sum_gate_ref(
    const HostTensor &logits, const HostTensor &bias, int64_t num_topk,
    int64_t num_topk_groups, int64_t num_groups, bool use_shared_as_routed,
    int64_t num_shared_experts, float routed_scaling_factor, int64_t ep_rank,
    int64_t num_ep_ranks, int64_t tp_rank, int64_t num_tp_ranks,
    std::string_view scoring_func, const std::optional<HostTensor> &mask,
    const std::optional<HostTensor> &fix_routing_mask,
    const std::optional<HostTensor> &to_physical_map,
    const std::optional<HostTensor> &logical_count,
    const std::optional<HostTensor> &unmapped_topk_idx) {
  const Gate g = detail::check_top2_sum_gate_args(
      logits, bias, num_topk, num_topk_groups, num_groups, use_shared_as_routed,
      num_shared_experts, ep_rank, num_ep_ranks, tp_rank, num_tp_ranks,
      scoring_func, mask, fix_routing_mask, to_physical_map, logical_count,
      unmapped_topk_idx);
  const int64_t slots = g.topk + g.shared;
  Top2SumGateResult r{HostTensor::zeros(DType::i64, {g.tokens, slots}),
                      HostTensor::zeros(DType::f32, {g.tokens, slots})};
  const float *logit = logits.data<float>();
  std::vector<float> p(g.experts);
  std::vector<int64_t> sel(g.topk);
  for (int64_t t = 0; t < g.tokens; ++t) {
    int64_t *idx = r.topk_idx.data<int64_t>() + t * slots;
    float *weight = r.topk_weights.data<float>() + t * slots;
    // Step 1: a masked token is not routed.
    if (mask && mask->at<uint8_t>({t}) == 0) {
      std::fill(idx, idx + slots, -1);
      std::fill(weight, weight + slots, 0.0f);
      if (unmapped_topk_idx)
        for (int64_t k = 0; k < g.topk; ++k)
          unmapped_topk_idx->at<int64_t>({t, k}) = -1;
      continue;
    }
    const float *row = logit + t * g.experts;
    for (int64_t e = 0; e < g.experts; ++e)
      if (!std::isfinite(row[e])) // the original's device assert
        detail::fail(fn,
                     "argument 'logits' holds {} at [{}, {}]; requires "
                     "finite values",
                     row[e], t, e);
    // Steps 2-4.
    const bool fixed =
        fix_routing_mask && fix_routing_mask->at<uint8_t>({t}) != 0;
    select(g, row, bias.data<float>(), p, sel, fixed);
    if (fixed)
      for (int64_t k = 0; k < g.topk; ++k) {
        sel[k] = unmapped_topk_idx->at<int64_t>({t, k});
        if (sel[k] < 0 || sel[k] >= g.experts)
          detail::fail(fn,
                       "argument 'unmapped_topk_idx' holds {} at [{}, "
                       "{}] of a fixed-routing token; requires an expert "
                       "index in [0, {})",
                       sel[k], t, k, g.experts);
      }
    // Step 5: 1e-20 first, then the K weights in slot order; divide, then
    // scale.
    float denominator = 1e-20f;
    for (int64_t k = 0; k < g.topk; ++k)
      denominator += p[sel[k]];
    for (int64_t k = 0; k < g.topk; ++k) {
      weight[k] = p[sel[k]] / denominator * routed_scaling_factor;
      idx[k] = sel[k];
      if (unmapped_topk_idx)
        unmapped_topk_idx->at<int64_t>({t, k}) = sel[k];
    }
    // Step 6: shared experts E, E+1, ... with weight 1 (not scaled).
    for (int64_t k = g.topk; k < slots; ++k) {
      idx[k] = g.experts + (k - g.topk);
      weight[k] = 1.0f;
    }
    for (int64_t k = 0; k < slots; ++k) {
      // Step 7: logical -> physical; int64 hash (the original's int32
      // t * 23333 wraps from t = 92036 on, spec §7.3).
      if (to_physical_map) {
        const int64_t l = idx[k];
        const int64_t count = logical_count->at<int32_t>({l});
        if (count < 1 || count > g.extra + 1)
          detail::fail(fn,
                       "argument 'logical_count' holds {} at [{}]; "
                       "requires 1 to {} (the columns of 'to_physical_map')",
                       count, l, g.extra + 1);
        const int64_t dup = (ep_rank + t * 23333) % count;
        idx[k] = to_physical_map->at<int32_t>({l, dup});
        if (idx[k] < 0 || idx[k] >= g.experts + g.extra)
          detail::fail(fn,
                       "argument 'to_physical_map' holds {} at [{}, {}]; "
                       "requires a physical expert in [0, {})",
                       idx[k], l, dup, g.experts + g.extra);
      }
      // Step 8: EP/TP mask; weights are kept.
      idx[k] =
          detail::mask_index_by_tp(idx[k], g.per_rank, tp_rank, num_tp_ranks);
    }
  }
  return r;
}

} // namespace tilejit::moe
