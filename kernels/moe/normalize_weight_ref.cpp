// normalize_weight_ref.cpp - CPU reference of normalize_weight (spec §1.9):
// a sequential float32 sum starting at 1e-20, then IEEE divisions.
#include "moe/check.h"
#include "moe/reference.h"

namespace tilejit::moe {

NormalizeWeightResult normalize_weight_ref(const HostTensor &topk_weights) {
  constexpr std::string_view fn = "normalize_weight_ref";
  detail::check_tensor(fn, "topk_weights", topk_weights, DType::f32, 2);
  const int64_t tokens = topk_weights.size(0), topk = topk_weights.size(1);
  NormalizeWeightResult r{HostTensor::zeros(DType::f32, {tokens}),
                          HostTensor::zeros(DType::f32, {tokens, topk})};
  const float *w = topk_weights.data<float>();
  float *normalized = r.normalized.data<float>();
  for (int64_t t = 0; t < tokens; ++t) {
    float denominator = 1e-20f;
    for (int64_t k = 0; k < topk; ++k)
      denominator += w[t * topk + k];
    r.denominator.data<float>()[t] = denominator;
    for (int64_t k = 0; k < topk; ++k)
      normalized[t * topk + k] = w[t * topk + k] / denominator;
  }
  return r;
}

} // namespace tilejit::moe
