// topk_sum_and_topk_group_idx_test.cpp - its case table: TileKernels' test
// matrix (72 and 256 experts in 4 to 16 groups, the top one or two summed,
// 2 or 4 groups kept, 4001 and 8001 tokens) over powers of two (ties of
// scores and of group scores everywhere), one group, 32 groups, a group of
// one expert, tails, no tokens, its benchmark shape, and mistakes. The ids
// are compared bytewise.
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

/// --shape T x G x N.
Case ranked(std::vector<int64_t> shape, int64_t sum, int64_t keep,
            int kind = Case::gpu, double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"num_topk_sum", std::to_string(sum)},
                  {"num_topk_groups", std::to_string(keep)}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(topk_sum_and_topk_group_idx) {
  // Powers of two from 1/8 to 8: many equal scores and equal group scores
  // (the ties' order is part of the contract).
  OpTest t{.op = "topk_sum_and_topk_group_idx",
           .fills = {{"scores", exponents(-3, 3)}},
           .poison_outputs = true};
  for (int64_t tokens : {4001, 8001})
    for (auto [experts, groups] :
         {std::pair{72, 4}, {72, 8}, {72, 12}, {256, 4}, {256, 8}, {256, 16}})
      for (int64_t sum : {1, 2})
        for (int64_t keep : {2, 4})
          t.cases.push_back(
              ranked({tokens, groups, experts / groups}, sum, keep));
  t.cases.push_back(ranked({100, 1, 64}, 2, 1));
  t.cases.push_back(ranked({257, 32, 32}, 2, 32));
  t.cases.push_back(ranked({33, 8, 1}, 1, 8));
  t.cases.push_back(ranked({0, 8, 32}, 2, 4));
  // TileKernels' benchmark: 256 experts in 8 groups, top 2 summed, 4 kept.
  t.cases.push_back(ranked({8001, 8, 32}, 2, 4, Case::bench, 7.65));

  const auto out = fake(DType::i64, {10, 4}, {}, 0x100000);
  t.errors = {
      {"33 groups",
       {fake(DType::f32, {10, 33, 4}), out},
       {},
       "topk_sum_and_topk_group_idx: argument 'scores' has shape [10, 33, 4] "
       "(G = 33); requires 1 <= G <= 32"},
      {"more scores a token than a block holds",
       {fake(DType::f32, {10, 8, 200}), out},
       {},
       "topk_sum_and_topk_group_idx: argument 'scores' has shape [10, 8, "
       "200] (G = 8, N = 200); requires N <= 64, and G and N padded to "
       "powers of two (G to at least 4) at most 1024 scores a token"},
      {"more groups kept than there are",
       {fake(DType::f32, {10, 2, 32}), fake(DType::i64, {10, 3}, {}, 0x100000)},
       {{"num_topk_groups", ops::ParamValue{int64_t{3}}}},
       "topk_sum_and_topk_group_idx: argument 'num_topk_groups' is 3; "
       "requires num_topk_groups <= G = 2"},
      {"two summed of groups of one",
       {fake(DType::f32, {10, 8, 1}), out},
       {},
       "topk_sum_and_topk_group_idx: argument 'num_topk_sum' is 2; requires "
       "num_topk_sum <= N = 1"},
  };
  return t;
}

} // namespace tilejit::harness
