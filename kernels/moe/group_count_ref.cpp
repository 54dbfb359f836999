// group_count_ref.cpp - CPU references of group_count and aux_fi (spec
// §1.10, §1.11): histograms of the ids of a (T, K) index tensor.
#include "moe/check.h"
#include "moe/reference.h"

namespace tilejit::moe {

namespace {

/// Occurrences of each id in [0, bins); -1 is skipped, any other value
/// outside [-1, bins) is rejected (the original device-asserts).
std::vector<int64_t> histogram(std::string_view fn, std::string_view arg,
                               const HostTensor &idx, int64_t bins) {
  detail::check_tensor(fn, arg, idx, DType::i64, 2);
  std::vector<int64_t> count(bins, 0);
  const int64_t *v = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    if (v[i] < -1 || v[i] >= bins)
      detail::fail(fn,
                   "argument '{}' holds {} at [{}, {}]; requires -1 or "
                   "an id in [0, {})",
                   arg, v[i], i / idx.size(1), i % idx.size(1), bins);
    if (v[i] >= 0)
      ++count[v[i]];
  }
  return count;
}

} // namespace

HostTensor group_count_ref(const HostTensor &group_idx, int64_t num_groups) {
  constexpr std::string_view fn = "group_count_ref";
  if (num_groups < 1)
    detail::fail(fn, "argument 'num_groups' is {}; requires >= 1", num_groups);
  std::vector<int64_t> count =
      histogram(fn, "group_idx", group_idx, num_groups);
  HostTensor counts = HostTensor::zeros(DType::i32, {num_groups});
  for (int64_t g = 0; g < num_groups; ++g)
    counts.data<int32_t>()[g] = static_cast<int32_t>(count[g]);
  return counts;
}

HostTensor aux_fi_ref(const HostTensor &topk_idx, int64_t num_experts,
                      int64_t num_aux_topk) {
  constexpr std::string_view fn = "aux_fi_ref";
  if (num_experts < 1)
    detail::fail(fn, "argument 'num_experts' is {}; requires >= 1",
                 num_experts);
  if (num_aux_topk < 1)
    detail::fail(fn, "argument 'num_aux_topk' is {}; requires >= 1",
                 num_aux_topk);
  std::vector<int64_t> count = histogram(fn, "topk_idx", topk_idx, num_experts);
  const int64_t tokens = topk_idx.size(0);
  HostTensor fi = HostTensor::zeros(DType::f32, {num_experts});
  // The original adds per-block float32 fractions atomically (tolerance
  // calc_diff < 2e-7); we compute each value in float64 and round once.
  // T == 0 gives zeros (no 0 / 0).
  if (tokens > 0)
    for (int64_t e = 0; e < num_experts; ++e)
      fi.data<float>()[e] = static_cast<float>(
          static_cast<double>(count[e]) * static_cast<double>(num_experts) /
          (static_cast<double>(tokens) * static_cast<double>(num_aux_topk)));
  return fi;
}

} // namespace tilejit::moe
