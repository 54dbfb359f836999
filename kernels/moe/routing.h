// routing.h - Ranking and renumbering rules shared by the MoE selection ops
// (internal; spec §1.1, §1.2, §1.4 step 8 and §1.12).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tilejit::moe::detail {

/// The order of a stable descending sort: a larger value first, equal values
/// by smaller index; NaN ranks above everything (torch.sort puts NaN first
/// when descending) and NaNs among themselves by index. -0.0 == +0.0.
bool ranks_before(float a, int64_t a_index, float b, int64_t b_index);

/// Indices of the `k` best values (ranks_before order), best first.
std::vector<int64_t> stable_topk(std::span<const float> values, int64_t k);

/// §1.2 group score: the best value (num_topk_sum 1) or best + second best
/// as float32 `top1 + top2` (num_topk_sum 2; equal maxima count twice).
float group_score(std::span<const float> group, int64_t num_topk_sum);

/// §1.2 ranking of `groups` consecutive groups of `group_size` values:
/// the `num_topk_groups` best groups by group_score, best first (= group g
/// goes to slot rank(g)).
std::vector<int64_t> rank_groups(std::span<const float> values, int64_t groups,
                                 int64_t group_size, int64_t num_topk_sum,
                                 int64_t num_topk_groups);

/// §1.4 step 8 / §1.12: keeps index v of an expert living on an EP rank
/// r = v / per_rank with r % num_tp_ranks == tp_rank and renumbers it to
/// dp * per_rank + local (dp = the data-parallel replica); -1 otherwise, and
/// for v < 0.
int64_t mask_index_by_tp(int64_t v, int64_t per_rank, int64_t tp_rank,
                         int64_t num_tp_ranks);

} // namespace tilejit::moe::detail
