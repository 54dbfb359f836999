// topk_gate_test.cpp - Tests of topk_gate (spec §1.1): descending order,
// ties to the smaller index, -inf and NaN, shapes and argument checks.
#include "moe_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace moe_test;
using tilejit::moe::topk_gate_ref;

TEST_CASE("topk_gate picks the largest scores, ties to the smaller index",
          "[ref][moe]") {
  HostTensor idx = topk_gate_ref(f32({2, 5}, {0.5f, 2, 2, -1, 3, //
                                              1, 1, 1, 1, 1}),
                                 3);
  REQUIRE(idx.dtype() == DType::i64);
  REQUIRE(idx.shape() == std::vector<int64_t>{2, 3});
  REQUIRE(idx.is_contiguous());
  CHECK(row<int64_t>(idx, 0) == std::vector<int64_t>{4, 1, 2});
  CHECK(row<int64_t>(idx, 1) == std::vector<int64_t>{0, 1, 2});
  // -0.0 and +0.0 are equal scores.
  CHECK(values<int64_t>(topk_gate_ref(f32({1, 2}, {-0.0f, 0.0f}), 2)) ==
        std::vector<int64_t>{0, 1});
  CHECK(values<int64_t>(topk_gate_ref(f32({1, 2}, {0.0f, -0.0f}), 1)) ==
        std::vector<int64_t>{0});
}

TEST_CASE("topk_gate never repeats an index, -inf and NaN included",
          "[ref][moe]") {
  // The original could pick an -inf element twice (spec §7.11); here -inf
  // ranks like any value and ties go to the smaller index.
  CHECK(values<int64_t>(topk_gate_ref(
            f32({1, 4}, {-INFINITY, -INFINITY, 1, -INFINITY}), 4)) ==
        std::vector<int64_t>{2, 0, 1, 3});
  // NaN ranks above +inf (torch.sort's descending order), NaNs by index.
  CHECK(values<int64_t>(
            topk_gate_ref(f32({1, 5}, {1, NAN, INFINITY, NAN, 2}), 5)) ==
        std::vector<int64_t>{1, 3, 2, 4, 0});
}

TEST_CASE("topk_gate output is a stable descending sort", "[ref][moe]") {
  std::mt19937 rng(5);
  for (auto [experts, topk] : {std::pair<int64_t, int64_t>{72, 6},
                               {16, 6},
                               {256, 8},
                               {5, 5},
                               {1, 1}}) {
    const int64_t tokens = 40;
    std::vector<float> s(tokens * experts);
    // Few distinct values, so ties are common.
    for (float &v : s)
      v = static_cast<float>(static_cast<int>(rng() % 7) - 3) * 0.5f;
    HostTensor idx = topk_gate_ref(f32({tokens, experts}, s), topk);
    for (int64_t t = 0; t < tokens; ++t) {
      std::vector<int64_t> r = row<int64_t>(idx, t);
      const float *score = s.data() + t * experts;
      REQUIRE(std::set<int64_t>(r.begin(), r.end()).size() == size_t(topk));
      for (int64_t k = 0; k + 1 < topk; ++k) {
        float a = score[r[k]], b = score[r[k + 1]];
        REQUIRE((a > b || (a == b && r[k] < r[k + 1])));
      }
      // Nothing left out ranks before the last pick.
      std::set<int64_t> picked(r.begin(), r.end());
      const int64_t last = r.back();
      for (int64_t e = 0; e < experts; ++e)
        if (!picked.count(e))
          REQUIRE((score[e] < score[last] ||
                   (score[e] == score[last] && e > last)));
    }
  }
}

TEST_CASE("topk_gate handles zero tokens", "[ref][moe]") {
  HostTensor idx = topk_gate_ref(HostTensor::zeros(DType::f32, {0, 72}), 6);
  CHECK(idx.shape() == std::vector<int64_t>{0, 6});
  CHECK(idx.dtype() == DType::i64);
}

TEST_CASE("topk_gate checks its arguments", "[ref][moe]") {
  CHECK_THROWS_WITH(
      topk_gate_ref(HostTensor::zeros(DType::bf16, {2, 8}), 2),
      "topk_gate_ref: argument 'scores' has dtype bf16; requires f32");
  CHECK_THROWS_WITH(
      topk_gate_ref(HostTensor::zeros(DType::f32, {8}), 2),
      "topk_gate_ref: argument 'scores' has shape [8]; requires a 2-D tensor");
  CHECK_THROWS_WITH(
      topk_gate_ref(HostTensor::zeros(DType::f32, {8, 4}).transposed(0, 1), 2),
      "topk_gate_ref: argument 'scores' has shape [4, 8] and strides [1, 4]; "
      "requires a contiguous tensor");
  CHECK_THROWS_WITH(topk_gate_ref(HostTensor::zeros(DType::f32, {2, 8}), 0),
                    "topk_gate_ref: argument 'num_topk' is 0; requires 1 <= "
                    "num_topk <= 8 (the number of experts)");
  CHECK_THROWS_WITH(topk_gate_ref(HostTensor::zeros(DType::f32, {2, 8}), 9),
                    "topk_gate_ref: argument 'num_topk' is 9; requires 1 <= "
                    "num_topk <= 8 (the number of experts)");
}
