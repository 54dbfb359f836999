// topk_sum_and_topk_group_idx_test.cpp - Tests of the group ranking
// primitive (spec §1.2) through topk_sum_and_topk_group_idx (§1.3).
#include "moe_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

using namespace moe_test;
using tilejit::moe::topk_sum_and_topk_group_idx_ref;

TEST_CASE("group scores are top-1 or top-1 + top-2, equal maxima twice",
          "[ref][moe]") {
  // 4 groups of 3: group scores with sum 2 are 7, 8 (4 + 4), 6, 6.5;
  // with sum 1 they are 5, 4, 6, 3.5.
  HostTensor s = f32({1, 4, 3}, {1, 5, 2, 4, 4, 0, 6, 0, 0, 3, 3.5f, 0.5f});
  HostTensor two = topk_sum_and_topk_group_idx_ref(s, 2, 3);
  REQUIRE(two.dtype() == DType::i64);
  REQUIRE(two.shape() == std::vector<int64_t>{1, 3});
  CHECK(values<int64_t>(two) == std::vector<int64_t>{1, 0, 3});
  CHECK(values<int64_t>(topk_sum_and_topk_group_idx_ref(s, 1, 3)) ==
        std::vector<int64_t>{2, 0, 1});
  CHECK(values<int64_t>(topk_sum_and_topk_group_idx_ref(s, 2, 4)) ==
        std::vector<int64_t>{1, 0, 3, 2});
}

TEST_CASE("equal group scores rank the lower group first", "[ref][moe]") {
  CHECK(values<int64_t>(topk_sum_and_topk_group_idx_ref(
            HostTensor::zeros(DType::f32, {1, 8, 2}), 2, 8)) ==
        std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  // The sum is float32: 1e8 + 1 rounds to 1e8, so group 1 ([1e8, 1]) ties
  // group 0 ([1e8, 0]) and comes second although in exact arithmetic it is
  // larger.
  CHECK(values<int64_t>(topk_sum_and_topk_group_idx_ref(
            f32({1, 2, 2}, {1e8f, 0, 1e8f, 1}), 2, 2)) ==
        std::vector<int64_t>{0, 1});
  // ... while 1e8 + 8 is representable and wins.
  CHECK(values<int64_t>(topk_sum_and_topk_group_idx_ref(
            f32({1, 2, 2}, {1e8f, 0, 1e8f, 8}), 2, 2)) ==
        std::vector<int64_t>{1, 0});
}

TEST_CASE("group ranking follows the spec's rank formula", "[ref][moe]") {
  std::mt19937 rng(3);
  for (auto [groups, size] : {std::pair<int64_t, int64_t>{4, 18},
                              {8, 9},
                              {12, 6},
                              {16, 16},
                              {32, 2},
                              {1, 1}}) {
    for (int64_t sum = 1; sum <= std::min<int64_t>(2, size); ++sum)
      for (int64_t keep : {int64_t(1), std::min<int64_t>(4, groups), groups}) {
        const int64_t tokens = 30;
        std::vector<float> s(tokens * groups * size);
        for (float &v : s)
          v = static_cast<float>(rng() % 9) * 0.25f;
        HostTensor out = topk_sum_and_topk_group_idx_ref(
            f32({tokens, groups, size}, s), sum, keep);
        REQUIRE(out.shape() == std::vector<int64_t>{tokens, keep});
        for (int64_t t = 0; t < tokens; ++t) {
          // Group score from a full sort (independent of the reference).
          std::vector<float> score(groups);
          for (int64_t g = 0; g < groups; ++g) {
            std::vector<float> v(s.begin() + (t * groups + g) * size,
                                 s.begin() + (t * groups + g + 1) * size);
            std::sort(v.begin(), v.end(), std::greater<float>());
            score[g] = sum == 1 ? v[0] : v[0] + v[1];
          }
          // rank(g) = #{g' : score > score(g)} + #{g' < g : equal}; group
          // g goes to slot rank(g) when rank(g) < keep.
          std::vector<int64_t> expected(keep, -1);
          for (int64_t g = 0; g < groups; ++g) {
            int64_t rank = 0;
            for (int64_t h = 0; h < groups; ++h)
              rank += score[h] > score[g] || (h < g && score[h] == score[g]);
            if (rank < keep)
              expected[rank] = g;
          }
          REQUIRE(row<int64_t>(out, t) == expected);
        }
      }
  }
}

TEST_CASE("topk_sum_and_topk_group_idx handles zero tokens", "[ref][moe]") {
  HostTensor out = topk_sum_and_topk_group_idx_ref(
      HostTensor::zeros(DType::f32, {0, 8, 32}), 2, 4);
  CHECK(out.shape() == std::vector<int64_t>{0, 4});
  CHECK(out.dtype() == DType::i64);
}

TEST_CASE("topk_sum_and_topk_group_idx checks its arguments", "[ref][moe]") {
  const std::string fn = "topk_sum_and_topk_group_idx_ref: ";
  HostTensor s = HostTensor::zeros(DType::f32, {2, 8, 4});
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(
                        HostTensor::zeros(DType::i32, {2, 8, 4}), 2, 4),
                    fn + "argument 'scores' has dtype i32; requires f32");
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(
                        HostTensor::zeros(DType::f32, {2, 32}), 2, 4),
                    fn + "argument 'scores' has shape [2, 32]; requires a 3-D "
                         "tensor");
  CHECK_THROWS_WITH(
      topk_sum_and_topk_group_idx_ref(s.transposed(1, 2), 2, 4),
      fn + "argument 'scores' has shape [2, 4, 8] and strides [32, 1, 4]; "
           "requires a contiguous tensor");
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(
                        HostTensor::zeros(DType::f32, {2, 33, 2}), 2, 4),
                    fn + "argument 'scores' has 33 groups (shape [2, 33, 2]); "
                         "requires 1 to 32 groups (one warp lane per group)");
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(s, 3, 4),
                    fn + "argument 'num_topk_sum' is 3; requires 1 or 2");
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(
                        HostTensor::zeros(DType::f32, {2, 8, 1}), 2, 4),
                    fn + "argument 'num_topk_sum' is 2; requires at most 1 "
                         "(the experts per group)");
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(s, 2, 0),
                    fn + "argument 'num_topk_groups' is 0; requires 1 <= "
                         "num_topk_groups <= 8 (the number of groups)");
  CHECK_THROWS_WITH(topk_sum_and_topk_group_idx_ref(s, 2, 9),
                    fn + "argument 'num_topk_groups' is 9; requires 1 <= "
                         "num_topk_groups <= 8 (the number of groups)");
}
