// moe_topk_gate_ref.cpp - CPU references of TileKernels 2.1's router
// (shared/specs/tk21_ops.md §4.0-§4.2): moe_topk_gate_forward (sqrt-softplus
// scores, top K of the biased scores, weights normalised by the warp's
// butterfly sum, shared experts, logical -> physical) and
// moe_topk_gate_backward (the gradient of the logits, in float64 as
// TileKernels' torch reference computes it).
#include "moe/check.h"
#include "moe/reference.h"
#include "moe/routing.h"

#include <cmath>
#include <limits>

namespace tilejit::moe {

namespace {

constexpr std::string_view fwd = "moe_topk_gate_forward_ref";
constexpr std::string_view bwd = "moe_topk_gate_backward_ref";

void check_flags(std::string_view fn, std::string_view arg, const HostTensor &m,
                 int64_t tokens) {
  detail::check_tensor(fn, arg, m, DType::boolean, 1);
  detail::check_shape(fn, arg, m, {tokens}, "(T, the rows of the scores)");
}

void check_experts_vector(std::string_view fn, std::string_view arg,
                          const HostTensor &v, int64_t experts) {
  detail::check_tensor(fn, arg, v, DType::f32, 1);
  detail::check_shape(fn, arg, v, {experts}, "(E, the experts)");
}

/// UserError unless arguments `a` and `b` are both given or neither.
void check_together(std::string_view fn, std::string_view a, bool has_a,
                    std::string_view b, bool has_b) {
  if (has_a != has_b)
    detail::fail(fn,
                 "argument '{}' is given without '{}'; requires both or "
                 "neither",
                 has_a ? a : b, has_a ? b : a);
}

void check_scoring(std::string_view fn, std::string_view scoring_func) {
  if (parse_scoring_func(scoring_func) != ScoringFunc::sqrtsoftplus)
    detail::fail(fn, "argument 'scoring_func' is '{}'; requires 'sqrtsoftplus'",
                 scoring_func);
}

/// The warp's sum of the K picked scores: lanes >= K hold 0, then for o =
/// 16, 8, 4, 2, 1 every lane adds lane l ^ o's value (all lanes end equal).
float butterfly_sum(const std::vector<float> &picked) {
  float v[32] = {};
  for (size_t k = 0; k < picked.size(); ++k)
    v[k] = picked[k];
  for (int o = 16; o >= 1; o /= 2) {
    float next[32];
    for (int l = 0; l < 32; ++l)
      next[l] = v[l] + v[l ^ o];
    std::copy(next, next + 32, v);
  }
  return v[0];
}

struct Shapes {
  int64_t tokens, experts, topk, shared, slots;
};

Shapes check_forward(const HostTensor &logits, int64_t num_topk,
                     bool use_shared_as_routed, int64_t num_shared_experts,
                     std::string_view scoring_func, const MoeTopkGateArgs &a) {
  detail::check_tensor(fwd, "logits", logits, DType::f32, 2);
  Shapes s{logits.size(0), logits.size(1), num_topk,
           use_shared_as_routed ? num_shared_experts : 0, 0};
  check_scoring(fwd, scoring_func);
  if (s.experts % 4 != 0)
    detail::fail(fwd,
                 "argument 'logits' has shape [{}, {}]; requires the experts "
                 "a multiple of 4",
                 s.tokens, s.experts);
  if (num_topk < 1 || num_topk > std::min<int64_t>(s.experts, 32))
    detail::fail(fwd, "argument 'num_topk' is {}; requires 1 to {}", num_topk,
                 std::min<int64_t>(s.experts, 32));
  if (use_shared_as_routed && (s.shared < 1 || s.shared > 2))
    detail::fail(fwd,
                 "argument 'num_shared_experts' is {} with "
                 "use_shared_as_routed; requires 1 or 2",
                 num_shared_experts);
  s.slots = s.topk + s.shared;
  if (s.slots > 32)
    detail::fail(fwd,
                 "arguments 'num_topk' and 'num_shared_experts' make {} "
                 "slots; requires at most 32",
                 s.slots);
  if (a.mask)
    check_flags(fwd, "mask", *a.mask, s.tokens);
  if (a.bias)
    check_experts_vector(fwd, "bias", *a.bias, s.experts);
  check_together(fwd, "image_bias", a.image_bias.has_value(),
                 "image_token_mask", a.image_token_mask.has_value());
  if (a.image_bias) {
    check_experts_vector(fwd, "image_bias", *a.image_bias, s.experts);
    check_flags(fwd, "image_token_mask", *a.image_token_mask, s.tokens);
  }
  if (a.fix_routing_mask) {
    check_flags(fwd, "fix_routing_mask", *a.fix_routing_mask, s.tokens);
    if (!a.unmapped_topk_idx)
      detail::fail(fwd, "argument 'fix_routing_mask' is given without "
                        "'unmapped_topk_idx'; requires both");
  }
  if (a.unmapped_topk_idx) {
    detail::check_tensor(fwd, "unmapped_topk_idx", *a.unmapped_topk_idx,
                         DType::i64, 2);
    detail::check_shape(fwd, "unmapped_topk_idx", *a.unmapped_topk_idx,
                        {s.tokens, s.topk}, "(T, num_topk)");
  }
  check_together(fwd, "to_physical_map", a.to_physical_map.has_value(),
                 "logical_count", a.logical_count.has_value());
  if (a.to_physical_map) {
    detail::check_tensor(fwd, "to_physical_map", *a.to_physical_map, DType::i32,
                         2);
    if (a.to_physical_map->size(0) != s.experts + s.shared)
      detail::fail(fwd,
                   "argument 'to_physical_map' has {} rows; requires E + S "
                   "= {} (routed and shared experts)",
                   a.to_physical_map->size(0), s.experts + s.shared);
    detail::check_tensor(fwd, "logical_count", *a.logical_count, DType::i32, 1);
    detail::check_shape(fwd, "logical_count", *a.logical_count,
                        {s.experts + s.shared}, "(E + S)");
  }
  if (a.force_random)
    detail::fail(fwd, "argument 'force_random' is given; requires none (the "
                      "forced-random path draws cuRAND's Philox numbers, which "
                      "this reference does not reproduce yet)");
  return s;
}

} // namespace

MoeTopkGateResult moe_topk_gate_forward_ref(
    const HostTensor &logits, int64_t num_topk, bool use_shared_as_routed,
    int64_t num_shared_experts, float routed_scaling_factor, int64_t ep_rank,
    std::string_view scoring_func, const MoeTopkGateArgs &a) {
  const Shapes s = check_forward(logits, num_topk, use_shared_as_routed,
                                 num_shared_experts, scoring_func, a);
  MoeTopkGateResult r{HostTensor::zeros(DType::i64, {s.tokens, s.slots}),
                      HostTensor::zeros(DType::f32, {s.tokens, s.slots}),
                      HostTensor::zeros(DType::f32, {s.tokens, s.experts})};
  std::vector<float> biased(s.experts), picked(s.topk);
  std::vector<int64_t> sel(s.topk);
  for (int64_t t = 0; t < s.tokens; ++t) {
    int64_t *idx = r.topk_idx.data<int64_t>() + t * s.slots;
    float *weight = r.topk_weights.data<float>() + t * s.slots;
    float *u = r.scores.data<float>() + t * s.experts;
    // A masked token: not routed, its scores 0.
    if (a.mask && a.mask->at<uint8_t>({t}) == 0) {
      std::fill(idx, idx + s.slots, -1);
      if (a.unmapped_topk_idx)
        for (int64_t k = 0; k < s.topk; ++k)
          a.unmapped_topk_idx->at<int64_t>({t, k}) = -1;
      continue;
    }
    const float *row = logits.data<float>() + t * s.experts;
    const HostTensor *bias = a.bias ? &*a.bias : nullptr;
    if (a.image_bias && a.image_token_mask->at<uint8_t>({t}) != 0)
      bias = &*a.image_bias;
    for (int64_t e = 0; e < s.experts; ++e) {
      if (!std::isfinite(row[e])) // the original's device assert
        detail::fail(fwd,
                     "argument 'logits' holds {} at [{}, {}]; requires "
                     "finite values",
                     row[e], t, e);
      u[e] = sqrtsoftplus_score(row[e]);
      biased[e] = u[e] + (bias ? bias->data<float>()[e] : 0.0f);
    }
    if (a.fix_routing_mask && a.fix_routing_mask->at<uint8_t>({t}) != 0) {
      for (int64_t k = 0; k < s.topk; ++k) {
        sel[k] = a.unmapped_topk_idx->at<int64_t>({t, k});
        if (sel[k] < 0 || sel[k] >= s.experts)
          detail::fail(fwd,
                       "argument 'unmapped_topk_idx' holds {} at [{}, {}] of "
                       "a fixed-routing token; requires an expert in [0, {})",
                       sel[k], t, k, s.experts);
      }
    } else {
      // K rounds of the largest biased score, ties to the lower expert.
      sel = detail::stable_topk(biased, s.topk);
    }
    // The unbiased scores, normalised by the butterfly sum plus 1e-20,
    // divided, then scaled.
    for (int64_t k = 0; k < s.topk; ++k)
      picked[k] = u[sel[k]];
    const float sum = butterfly_sum(picked) + 1e-20f;
    for (int64_t k = 0; k < s.topk; ++k) {
      idx[k] = sel[k];
      weight[k] = picked[k] / sum * routed_scaling_factor;
      if (a.unmapped_topk_idx)
        a.unmapped_topk_idx->at<int64_t>({t, k}) = sel[k];
    }
    // Shared experts E, E + 1 with weight 1 (not scaled).
    for (int64_t k = s.topk; k < s.slots; ++k) {
      idx[k] = s.experts + (k - s.topk);
      weight[k] = 1.0f;
    }
    if (!a.to_physical_map)
      continue;
    // Logical -> physical; the hash in int64 (the original's int32 product
    // t * 23333 wraps from t = 92038 on, tk21_ops.md §4.1).
    const int64_t columns = a.to_physical_map->size(1);
    for (int64_t k = 0; k < s.slots; ++k) {
      const int64_t l = idx[k];
      const int64_t count = a.logical_count->at<int32_t>({l});
      if (count < 1 || count > columns)
        detail::fail(fwd,
                     "argument 'logical_count' holds {} at [{}]; requires 1 "
                     "to {} (the columns of 'to_physical_map')",
                     count, l, columns);
      const int64_t dup = (ep_rank + t * 23333) % count;
      idx[k] = a.to_physical_map->at<int32_t>({l, dup});
    }
  }
  return r;
}

HostTensor moe_topk_gate_backward_ref(
    const HostTensor &scores, const HostTensor &topk_idx,
    const HostTensor &topk_weights, const HostTensor &grad_topk_weights,
    float routed_scaling_factor, std::string_view scoring_func,
    const std::optional<HostTensor> &mask,
    const std::optional<HostTensor> &grad_scores_sum) {
  detail::check_tensor(bwd, "scores", scores, DType::f32, 2);
  const int64_t tokens = scores.size(0), experts = scores.size(1);
  check_scoring(bwd, scoring_func);
  detail::check_tensor(bwd, "topk_idx", topk_idx, DType::i64, 2);
  if (topk_idx.size(0) != tokens)
    detail::fail(bwd,
                 "argument 'topk_idx' has {} rows; requires T = {} (the rows "
                 "of 'scores')",
                 topk_idx.size(0), tokens);
  const int64_t topk = topk_idx.size(1);
  for (auto [arg, t] : {std::pair{"topk_weights", &topk_weights},
                        std::pair{"grad_topk_weights", &grad_topk_weights}}) {
    detail::check_tensor(bwd, arg, *t, DType::f32, 2);
    detail::check_shape(bwd, arg, *t, {tokens, topk},
                        "(T, K), the shape of 'topk_idx'");
  }
  check_together(bwd, "mask", mask.has_value(), "grad_scores_sum",
                 grad_scores_sum.has_value());
  int64_t per_sequence = 0;
  if (mask) {
    check_flags(bwd, "mask", *mask, tokens);
    detail::check_tensor(bwd, "grad_scores_sum", *grad_scores_sum, DType::f32,
                         2);
    const int64_t sequences = grad_scores_sum->size(0);
    if (grad_scores_sum->size(1) != experts || sequences < 1 ||
        tokens % sequences != 0)
      detail::fail(bwd,
                   "argument 'grad_scores_sum' has shape [{}, {}]; requires "
                   "(Sq, E = {}) with Sq dividing T = {}",
                   sequences, grad_scores_sum->size(1), experts, tokens);
    per_sequence = tokens / sequences;
  }
  HostTensor grad = HostTensor::zeros(DType::f32, {tokens, experts});
  std::vector<double> route(experts);
  for (int64_t t = 0; t < tokens; ++t) {
    const float *u = scores.data<float>() + t * experts;
    std::fill(route.begin(), route.end(), 0.0);
    double d = 0, dot = 0;
    for (int64_t k = 0; k < topk; ++k) {
      const int64_t e = topk_idx.at<int64_t>({t, k});
      if (e < -1 || e >= experts)
        detail::fail(bwd,
                     "argument 'topk_idx' holds {} at [{}, {}]; requires -1 "
                     "or a routed expert in [0, {})",
                     e, t, k, experts);
      if (e < 0)
        continue;
      d += u[e];
      dot += static_cast<double>(grad_topk_weights.at<float>({t, k})) *
             topk_weights.at<float>({t, k});
    }
    for (int64_t k = 0; k < topk; ++k) {
      const int64_t e = topk_idx.at<int64_t>({t, k});
      if (e >= 0) // a repeated expert accumulates
        route[e] += (static_cast<double>(routed_scaling_factor) *
                         grad_topk_weights.at<float>({t, k}) -
                     dot) /
                    (d + 1e-20);
    }
    double su = 0, hu = 0, inv = 0;
    const float *h = nullptr;
    if (mask) {
      h = grad_scores_sum->data<float>() + (t / per_sequence) * experts;
      for (int64_t e = 0; e < experts; ++e) {
        su += u[e];
        hu += static_cast<double>(h[e]) * u[e];
      }
      inv = mask->at<uint8_t>({t}) != 0 ? 1.0 / su : 0.0;
    }
    float *out = grad.data<float>() + t * experts;
    for (int64_t e = 0; e < experts; ++e) {
      const double ue = u[e];
      // du/dx of u = sqrt(softplus(x)): sigmoid(x) / (2u) = (1 - e^-u^2) /
      // (2u), 0 at u = 0.
      const double dudx = ue == 0 ? 0.0 : -std::expm1(-ue * ue) / (2 * ue);
      const double g = h ? route[e] + (h[e] - hu * inv) * inv : route[e];
      out[e] = static_cast<float>(dudx * g);
    }
  }
  return grad;
}

} // namespace tilejit::moe
