// topk_gate_ref.cpp - CPU reference of topk_gate (spec §1.1): per row, a
// stable descending sort of the scores, first num_topk indices.
#include "moe/check.h"
#include "moe/reference.h"
#include "moe/routing.h"

namespace tilejit::moe {

HostTensor topk_gate_ref(const HostTensor &scores, int64_t num_topk) {
  constexpr std::string_view fn = "topk_gate_ref";
  detail::check_tensor(fn, "scores", scores, DType::f32, 2);
  const int64_t tokens = scores.size(0), experts = scores.size(1);
  if (num_topk < 1 || num_topk > experts)
    detail::fail(fn,
                 "argument 'num_topk' is {}; requires 1 <= num_topk <= {} "
                 "(the number of experts)",
                 num_topk, experts);
  HostTensor topk_idx = HostTensor::zeros(DType::i64, {tokens, num_topk});
  const float *s = scores.data<float>();
  int64_t *idx = topk_idx.data<int64_t>();
  for (int64_t t = 0; t < tokens; ++t) {
    // The original picks the max K times and sets the pick to -inf, so a row
    // holding -inf can repeat an index and a NaN row yields INT32_MAX (spec
    // §7.11). We rank with a total order instead: every index at most once,
    // -inf like any other value, NaN above +inf (the torch reference
    // stable_topk's order).
    std::vector<int64_t> best = detail::stable_topk(
        std::span<const float>(s + t * experts, experts), num_topk);
    std::copy(best.begin(), best.end(), idx + t * num_topk);
  }
  return topk_idx;
}

} // namespace tilejit::moe
