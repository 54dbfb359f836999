// topk_sum_and_topk_group_idx_ref.cpp - CPU reference of
// topk_sum_and_topk_group_idx (spec §1.3): the §1.2 group ranking per token.
#include "moe/check.h"
#include "moe/reference.h"
#include "moe/routing.h"

namespace tilejit::moe {

HostTensor topk_sum_and_topk_group_idx_ref(const HostTensor &scores,
                                           int64_t num_topk_sum,
                                           int64_t num_topk_groups) {
  constexpr std::string_view fn = "topk_sum_and_topk_group_idx_ref";
  detail::check_tensor(fn, "scores", scores, DType::f32, 3);
  const int64_t tokens = scores.size(0), groups = scores.size(1),
                group_size = scores.size(2);
  if (groups < 1 || groups > 32)
    detail::fail(fn,
                 "argument 'scores' has {} groups (shape [{}]); requires "
                 "1 to 32 groups (one warp lane per group)",
                 groups, fmt::join(scores.shape(), ", "));
  if (num_topk_sum != 1 && num_topk_sum != 2)
    detail::fail(fn, "argument 'num_topk_sum' is {}; requires 1 or 2",
                 num_topk_sum);
  if (num_topk_sum > group_size)
    detail::fail(fn,
                 "argument 'num_topk_sum' is {}; requires at most {} (the "
                 "experts per group)",
                 num_topk_sum, group_size);
  // The spec only bounds num_topk_groups by G; 0 would ask for an empty
  // selection, which no caller wants, so at least one group is required.
  if (num_topk_groups < 1 || num_topk_groups > groups)
    detail::fail(fn,
                 "argument 'num_topk_groups' is {}; requires 1 <= "
                 "num_topk_groups <= {} (the number of groups)",
                 num_topk_groups, groups);
  HostTensor group_idx =
      HostTensor::zeros(DType::i64, {tokens, num_topk_groups});
  const int64_t row = groups * group_size;
  const float *s = scores.data<float>();
  int64_t *out = group_idx.data<int64_t>();
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int64_t> best =
        detail::rank_groups(std::span<const float>(s + t * row, row), groups,
                            group_size, num_topk_sum, num_topk_groups);
    std::copy(best.begin(), best.end(), out + t * num_topk_groups);
  }
  return group_idx;
}

} // namespace tilejit::moe
