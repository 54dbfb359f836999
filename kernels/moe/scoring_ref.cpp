// scoring_ref.cpp - The scoring functions (spec §1.0) and the ranking rules
// every MoE top-k shares (§1.1, §1.2, the EP/TP renumbering of §1.4/§1.12).
#include "moe/reference.h"
#include "moe/routing.h"

#include "common/cuda_math.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <string>

namespace tilejit::moe {

std::optional<ScoringFunc> parse_scoring_func(std::string_view name) {
  std::string lower(name);
  for (char &c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "sigmoid")
    return ScoringFunc::sigmoid;
  if (lower == "sqrtsoftplus")
    return ScoringFunc::sqrtsoftplus;
  if (lower == "softmax")
    return ScoringFunc::softmax;
  if (lower == "identity")
    return ScoringFunc::identity;
  return std::nullopt;
}

// e^x and log(1 + x) as CUDA computes them (the GPU kernels', torch's).
float sigmoid_score(float x) { return 1.0f / (1.0f + ref::cuda_expf(-x)); }

float sqrtsoftplus_score(float x) {
  // PyTorch's F.softplus threshold (beta 1): linear above 20.
  float softplus = x > 20.0f ? x : ref::cuda_log1pf(ref::cuda_expf(x));
  return std::sqrt(softplus);
}

std::vector<float> softmax_scores(std::span<const float> logits) {
  float max = -INFINITY;
  for (float x : logits)
    max = std::max(max, x);
  const size_t n = logits.size();
  std::vector<float> p(n);
  for (size_t i = 0; i < n; ++i)
    p[i] = ref::cuda_expf(logits[i] - max);
  // A warp's sum: lane l adds its 4-element chunks (elements 4l + 128j ..
  // 4l + 128j + 3) in order, then the lanes combine by xor butterfly at
  // distances 1, 2, 4, 8, 16 (DeepSeek's kernel: the same lanes, distances
  // 16 down to 1; within the spec's tolerance of each other).
  float lane[32];
  for (size_t l = 0; l < 32; ++l) {
    lane[l] = 0.0f;
    for (size_t chunk = l; 4 * chunk < n; chunk += 32)
      for (size_t i = 4 * chunk; i < std::min(n, 4 * chunk + 4); ++i)
        lane[l] += p[i];
  }
  for (size_t d = 1; d < 32; d *= 2) {
    float next[32];
    for (size_t l = 0; l < 32; ++l)
      next[l] = lane[l] + lane[l ^ d];
    std::copy(next, next + 32, lane);
  }
  for (float &v : p)
    v = v / lane[0];
  return p;
}

namespace detail {

bool ranks_before(float a, int64_t a_index, float b, int64_t b_index) {
  bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan || b_nan)
    return a_nan && (!b_nan || a_index < b_index);
  return a > b || (a == b && a_index < b_index);
}

std::vector<int64_t> stable_topk(std::span<const float> values, int64_t k) {
  std::vector<int64_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
    return ranks_before(values[i], i, values[j], j);
  });
  order.resize(static_cast<size_t>(k));
  return order;
}

float group_score(std::span<const float> group, int64_t num_topk_sum) {
  std::vector<int64_t> best = stable_topk(group, num_topk_sum);
  float score = group[best[0]];
  if (num_topk_sum == 2)
    score = score + group[best[1]];
  return score;
}

std::vector<int64_t> rank_groups(std::span<const float> values, int64_t groups,
                                 int64_t group_size, int64_t num_topk_sum,
                                 int64_t num_topk_groups) {
  std::vector<float> scores(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g)
    scores[g] =
        group_score(values.subspan(g * group_size, group_size), num_topk_sum);
  return stable_topk(scores, num_topk_groups);
}

int64_t mask_index_by_tp(int64_t v, int64_t per_rank, int64_t tp_rank,
                         int64_t num_tp_ranks) {
  if (v < 0 || (v / per_rank) % num_tp_ranks != tp_rank)
    return -1;
  const int64_t per_dp = per_rank * num_tp_ranks;
  int64_t local = v - tp_rank * per_rank;
  int64_t dp = local / per_dp;
  int64_t renumbered = local - dp * per_dp + dp * per_rank;
  return renumbered < 0 ? -1 : renumbered;
}

} // namespace detail
} // namespace tilejit::moe
