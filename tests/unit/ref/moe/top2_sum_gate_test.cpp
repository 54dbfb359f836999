// top2_sum_gate_test.cpp - Hand-computed cases of the main router (spec
// §1.4): scoring and bias, softmax ranking on logits, group limiting,
// normalisation order, shared experts, the physical map and its int64 hash,
// EP/TP masking, masked and fixed-routing tokens.
#include "moe_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace moe_test;
using namespace tilejit::moe;

namespace {

/// No groups, shared experts, map, masks; one EP and TP rank.
Top2SumGateResult plain_gate(const HostTensor &logits, const HostTensor &bias,
                             int64_t topk, std::string_view scoring,
                             float scale = 1.0f) {
  return top2_sum_gate_ref(logits, bias, topk, 0, 0, false, 0, scale, 0, 1, 0,
                           1, scoring);
}

/// The spec's step 5 for K picked unbiased scores.
std::vector<float> normalised(std::vector<float> w, float scale) {
  float denominator = 1e-20f;
  for (float v : w)
    denominator += v;
  for (float &v : w)
    v = v / denominator * scale;
  return w;
}

} // namespace

TEST_CASE("top2_sum_gate ranks sigmoid scores plus bias", "[ref][moe]") {
  HostTensor logits = f32({1, 8}, {0, 1, 2, -1, 0.5f, 3, -2, 1.5f});
  HostTensor bias = f32({8}, {0, 0, 0, 0, 0, -0.5f, 0, 0.6f});
  // s = sigmoid(logit) + bias: expert 7 (1.42), then 2 (0.88), then 5 (0.45).
  Top2SumGateResult r = plain_gate(logits, bias, 2, "sigmoid", 1.5f);
  REQUIRE(r.topk_idx.dtype() == DType::i64);
  REQUIRE(r.topk_weights.dtype() == DType::f32);
  REQUIRE(r.topk_idx.shape() == std::vector<int64_t>{1, 2});
  REQUIRE(r.topk_weights.shape() == std::vector<int64_t>{1, 2});
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{7, 2});
  // Weights come from the scores without bias, divided, then scaled.
  CHECK(values<float>(r.topk_weights) ==
        normalised({sigmoid_score(1.5f), sigmoid_score(2.0f)}, 1.5f));
  // Without the bias, expert 5 leads.
  r = plain_gate(logits, HostTensor::zeros(DType::f32, {8}), 2, "Sigmoid");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{5, 2});
}

TEST_CASE("top2_sum_gate with softmax ranks on logits plus bias",
          "[ref][moe]") {
  HostTensor logits = f32({1, 4}, {0, 1, 0, 0});
  HostTensor bias = f32({4}, {0.9f, 0, 0, 0});
  // logit + bias = [0.9, 1, 0, 0] -> expert 1; ranking on p + bias would
  // pick expert 0 (p0 + 0.9 = 1.07 > p1 = 0.48).
  Top2SumGateResult r = plain_gate(logits, bias, 1, "softmax");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{1});
  CHECK(values<float>(r.topk_weights) == std::vector<float>{1.0f});
  std::vector<float> p = softmax_scores(std::vector<float>{0, 1, 0, 0});
  r = plain_gate(logits, bias, 2, "softmax", 2.5f);
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{1, 0});
  CHECK(values<float>(r.topk_weights) == normalised({p[1], p[0]}, 2.5f));
  // Sigmoid with the same inputs ranks p + bias: expert 0 first.
  r = plain_gate(logits, bias, 1, "sigmoid");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{0});
}

TEST_CASE("top2_sum_gate with sqrtsoftplus", "[ref][moe]") {
  Top2SumGateResult r =
      plain_gate(f32({1, 4}, {-1, 2, 0.5f, 3}),
                 HostTensor::zeros(DType::f32, {4}), 3, "sqrtsoftplus");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{3, 1, 2});
  CHECK(values<float>(r.topk_weights) ==
        normalised({sqrtsoftplus_score(3), sqrtsoftplus_score(2),
                    sqrtsoftplus_score(0.5f)},
                   1.0f));
}

TEST_CASE("top2_sum_gate picks ties in expert order", "[ref][moe]") {
  // Equal scores: the smaller expert index first, in every slot.
  Top2SumGateResult r =
      plain_gate(f32({1, 8}, {0, 1, 0, 1, 1, 0, 0, 1}),
                 HostTensor::zeros(DType::f32, {8}), 6, "sigmoid");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{1, 3, 4, 7, 0, 2});
}

TEST_CASE("top2_sum_gate keeps only the best groups by top-2 sum",
          "[ref][moe]") {
  // Softmax, bias 0: s = logits. Groups of 4: top-2 sums 10, 12 (6 + 6,
  // equal maxima twice), 10, 2. Two groups kept: 1, then 0 (ties 2, lower
  // index first).
  HostTensor logits = f32({1, 16}, {10, 0, 0, 0, 6, 6, 0, 0, //
                                    7, 3, 0, 0, 1, 1, 1, 1});
  HostTensor bias = HostTensor::zeros(DType::f32, {16});
  Top2SumGateResult r = top2_sum_gate_ref(logits, bias, 3, 2, 4, false, 0, 1.0f,
                                          0, 1, 0, 1, "softmax");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{0, 4, 5});
  std::vector<float> p = softmax_scores(values<float>(logits));
  CHECK(values<float>(r.topk_weights) == normalised({p[0], p[4], p[5]}, 1));
  // num_groups == num_topk_groups (and 0, 0) skip grouping: expert 8 (7)
  // is picked.
  r = top2_sum_gate_ref(logits, bias, 3, 4, 4, false, 0, 1.0f, 0, 1, 0, 1,
                        "softmax");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{0, 8, 4});
  CHECK(values<int64_t>(plain_gate(logits, bias, 3, "softmax").topk_idx) ==
        std::vector<int64_t>{0, 8, 4});
}

TEST_CASE("top2_sum_gate renumbers experts for the TP rank", "[ref][moe]") {
  // E = 16, 4 EP ranks of 4 experts, 2 TP ranks: tp_rank 1 keeps EP ranks 1
  // and 3, renumbered 4..7 -> 0..3 and 12..15 -> 4..7.
  HostTensor logits = HostTensor::zeros(DType::f32, {1, 16});
  logits.at<float>({0, 13}) = 4;
  logits.at<float>({0, 2}) = 3;
  logits.at<float>({0, 5}) = 2;
  logits.at<float>({0, 12}) = 1;
  Top2SumGateResult r =
      top2_sum_gate_ref(logits, HostTensor::zeros(DType::f32, {16}), 4, 0, 0,
                        false, 0, 1.0f, 0, 4, 1, 2, "sigmoid");
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{5, -1, 1, 4});
  // Masking leaves the weights alone.
  CHECK(values<float>(r.topk_weights) ==
        normalised({sigmoid_score(4), sigmoid_score(3), sigmoid_score(2),
                    sigmoid_score(1)},
                   1.0f));
}

TEST_CASE("top2_sum_gate maps logical to physical experts and adds shared "
          "experts",
          "[ref][moe]") {
  // E = 8, K = 2, S = 1 shared expert (logical 8), X = 2 extra experts:
  // map row l = [l, 8, 9]. 2 EP ranks of 5 physical experts, TP 2, tp_rank
  // 1 keeps physical 5..9 as 0..4. ep_rank 1.
  HostTensor logits = HostTensor::zeros(DType::f32, {2, 8});
  logits.at<float>({0, 6}) = 3;
  logits.at<float>({0, 1}) = 2;
  logits.at<float>({1, 3}) = 3;
  logits.at<float>({1, 7}) = 2;
  std::vector<int32_t> map;
  for (int32_t l = 0; l < 9; ++l)
    map.insert(map.end(), {l, 8, 9});
  HostTensor count = i32({9}, {1, 1, 1, 2, 1, 1, 3, 1, 2});
  HostTensor unmapped = HostTensor::zeros(DType::i64, {2, 2});
  Top2SumGateResult r =
      top2_sum_gate_ref(logits, HostTensor::zeros(DType::f32, {8}), 2, 0, 0,
                        true, 1, 1.5f, 1, 2, 1, 2, "sigmoid", std::nullopt,
                        std::nullopt, i32({9, 3}, map), count, unmapped);
  REQUIRE(r.topk_idx.shape() == std::vector<int64_t>{2, 3});
  // Token 0: logical [6, 1, 8]; dup = (1 + 0 * 23333) % count = [1, 0, 1]
  // -> physical [8, 1, 8] -> EP ranks [1, 0, 1] -> [3, -1, 3].
  CHECK(row<int64_t>(r.topk_idx, 0) == std::vector<int64_t>{3, -1, 3});
  // Token 1: logical [3, 7, 8]; dup = 23334 % count = [0, 0, 0] ->
  // physical [3, 7, 8] -> [-1, 2, 3].
  CHECK(row<int64_t>(r.topk_idx, 1) == std::vector<int64_t>{-1, 2, 3});
  // Routed weights scaled by 1.5; the shared expert's weight is 1, unscaled.
  std::vector<float> w0 =
      normalised({sigmoid_score(3), sigmoid_score(2)}, 1.5f);
  CHECK(row<float>(r.topk_weights, 0) ==
        std::vector<float>{w0[0], w0[1], 1.0f});
  CHECK(row<float>(r.topk_weights, 1) ==
        std::vector<float>{w0[0], w0[1], 1.0f});
  // unmapped_topk_idx holds the logical routed picks.
  CHECK(values<int64_t>(unmapped) == std::vector<int64_t>{6, 1, 3, 7});
}

TEST_CASE("top2_sum_gate hashes the duplicate in int64", "[ref][moe]") {
  // Token 92039: 92039 * 23333 = 2147545987 > INT32_MAX. In int64 the
  // duplicate is 2147545987 % 7 = 6; the original's int32 product wraps and
  // would pick another column (spec §7.3).
  const int64_t tokens = 92040, t = tokens - 1;
  const int64_t wrapped =
      static_cast<int32_t>(static_cast<uint32_t>(t) * 23333u);
  REQUIRE((t * 23333) % 7 == 6);
  REQUIRE(wrapped % 7 != 6);
  REQUIRE(((wrapped % 7) + 7) % 7 != 6);
  std::vector<uint8_t> routed(tokens, 0);
  routed[t] = 1; // route only the last token
  std::vector<int32_t> map(4 * 7, 0);
  for (int32_t c = 0; c < 7; ++c)
    map[c] = c; // logical 0 -> physical 0..6
  Top2SumGateResult r =
      top2_sum_gate_ref(HostTensor::zeros(DType::f32, {tokens, 4}),
                        HostTensor::zeros(DType::f32, {4}), 1, 0, 0, false, 0,
                        1.0f, 0, 1, 0, 1, "sigmoid", boolean(routed),
                        std::nullopt, i32({4, 7}, map), i32({4}, {7, 1, 1, 1}));
  CHECK(r.topk_idx.at<int64_t>({t, 0}) == 6);
  CHECK(r.topk_idx.at<int64_t>({0, 0}) == -1);
}

TEST_CASE("top2_sum_gate skips masked tokens", "[ref][moe]") {
  std::vector<int32_t> map;
  for (int32_t l = 0; l < 9; ++l)
    map.insert(map.end(), {l, 8});
  HostTensor unmapped = i64({3, 2}, {5, 5, 5, 5, 5, 5});
  HostTensor logits = f32({3, 8}, std::vector<float>(24, 0.25f));
  logits.at<float>({1, 0}) = INFINITY; // never read: the token is masked
  Top2SumGateResult r = top2_sum_gate_ref(
      logits, HostTensor::zeros(DType::f32, {8}), 2, 0, 0, true, 1, 1.0f, 0, 1,
      0, 1, "sigmoid", boolean({1, 0, 1}), std::nullopt, i32({9, 2}, map),
      i32({9}, std::vector<int32_t>(9, 1)), unmapped);
  CHECK(row<int64_t>(r.topk_idx, 1) == std::vector<int64_t>{-1, -1, -1});
  CHECK(row<float>(r.topk_weights, 1) == std::vector<float>{0, 0, 0});
  CHECK(row<int64_t>(unmapped, 1) == std::vector<int64_t>{-1, -1});
  CHECK(row<int64_t>(r.topk_idx, 0) == std::vector<int64_t>{0, 1, 8});
  CHECK(row<int64_t>(unmapped, 2) == std::vector<int64_t>{0, 1});
}

TEST_CASE("top2_sum_gate follows fixed routing", "[ref][moe]") {
  HostTensor logits = f32({2, 4}, {0.5f, -1, 2, 1, 0.5f, -1, 2, 1});
  // Row stride 5: unmapped_topk_idx may be a strided view (last stride 1).
  HostTensor unmapped = HostTensor::zeros_strided(
      DType::i64, std::vector<int64_t>{2, 2}, std::vector<int64_t>{5, 1});
  unmapped.at<int64_t>({0, 0}) = 1;
  unmapped.at<int64_t>({0, 1}) = 0;
  Top2SumGateResult r =
      top2_sum_gate_ref(logits, HostTensor::zeros(DType::f32, {4}), 2, 0, 0,
                        false, 0, 2.0f, 0, 1, 0, 1, "sigmoid", std::nullopt,
                        boolean({1, 0}), std::nullopt, std::nullopt, unmapped);
  // Token 0 keeps the given experts, weights from their scores.
  CHECK(row<int64_t>(r.topk_idx, 0) == std::vector<int64_t>{1, 0});
  CHECK(row<float>(r.topk_weights, 0) ==
        normalised({sigmoid_score(-1), sigmoid_score(0.5f)}, 2.0f));
  CHECK(unmapped.at<int64_t>({0, 0}) == 1);
  CHECK(unmapped.at<int64_t>({0, 1}) == 0);
  // Token 1 is routed normally and its picks are written back.
  CHECK(row<int64_t>(r.topk_idx, 1) == std::vector<int64_t>{2, 3});
  CHECK(unmapped.at<int64_t>({1, 0}) == 2);
  CHECK(unmapped.at<int64_t>({1, 1}) == 3);
}

TEST_CASE("top2_sum_gate slot order is stable on equal scores (the spec's "
          "stability check)",
          "[ref][moe]") {
  // The tests' fixed config: 72 experts, S = 1, X = 32 (identity map,
  // logical_count 1), 4 EP ranks, 2 TP ranks, tp_rank 0; all-zero logits
  // and bias; the last 3 tokens masked.
  const int64_t tokens = 10, experts = 72, topk = 6, extra = 32;
  std::vector<int32_t> map;
  for (int32_t l = 0; l < experts + 1; ++l)
    for (int64_t c = 0; c <= extra; ++c)
      map.push_back(l);
  std::vector<uint8_t> mask(tokens, 1);
  mask[7] = mask[8] = mask[9] = 0;
  Top2SumGateResult r = top2_sum_gate_ref(
      HostTensor::zeros(DType::f32, {tokens, experts}),
      HostTensor::zeros(DType::f32, {experts}), topk, 0, 0, true, 1, 1.5f, 0, 4,
      0, 2, "sigmoid", boolean(mask), std::nullopt,
      i32({experts + 1, extra + 1}, map),
      i32({experts + 1}, std::vector<int32_t>(experts + 1, 1)));
  for (int64_t t = 0; t < 7; ++t) {
    std::vector<int64_t> ids = row<int64_t>(r.topk_idx, t);
    for (int64_t k = 0; k < std::min<int64_t>(experts / 4, topk); ++k)
      CHECK(ids[k] == k);
    // Equal scores: every routed weight is 1.5 / 6.
    for (int64_t k = 0; k < topk; ++k)
      CHECK(r.topk_weights.at<float>({t, k}) == Approx(0.25f));
  }
}

TEST_CASE("top2_sum_gate handles zero tokens", "[ref][moe]") {
  Top2SumGateResult r =
      plain_gate(HostTensor::zeros(DType::f32, {0, 8}),
                 HostTensor::zeros(DType::f32, {8}), 2, "softmax");
  CHECK(r.topk_idx.shape() == std::vector<int64_t>{0, 2});
  CHECK(r.topk_weights.shape() == std::vector<int64_t>{0, 2});
}
