// small_ops_test.cpp - Tests of normalize_weight, group_count, aux_fi,
// mask_indices_by_tp and inplace_unique_group_indices (spec §1.9-§1.13).
#include "moe_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace moe_test;
using namespace tilejit::moe;

TEST_CASE("normalize_weight divides by 1e-20 plus the sequential sum",
          "[ref][moe]") {
  NormalizeWeightResult r =
      normalize_weight_ref(f32({3, 2}, {1, 3, 0, 0, 0.5f, 0.25f}));
  REQUIRE(r.denominator.dtype() == DType::f32);
  REQUIRE(r.denominator.shape() == std::vector<int64_t>{3});
  REQUIRE(r.normalized.shape() == std::vector<int64_t>{3, 2});
  CHECK(values<float>(r.denominator) == std::vector<float>{4, 1e-20f, 0.75f});
  CHECK(values<float>(r.normalized) ==
        std::vector<float>{0.25f, 0.75f, 0, 0, 0.5f / 0.75f, 0.25f / 0.75f});
  // Sequential order: after 1, each 1e-8 is below half an ulp and vanishes;
  // summing the small ones first would give 1.0000001.
  std::vector<float> w(11, 1e-8f);
  w[0] = 1;
  r = normalize_weight_ref(f32({1, 11}, w));
  CHECK(r.denominator.at<float>({0}) == 1.0f);
  CHECK(r.normalized.at<float>({0, 1}) == 1e-8f);
  // 1e-20 comes first: it is absorbed by any weight of normal size but is
  // all there is for a tiny one.
  r = normalize_weight_ref(f32({1, 1}, {1e-20f}));
  CHECK(r.denominator.at<float>({0}) == 2e-20f);
  CHECK(r.normalized.at<float>({0, 0}) == 0.5f);
}

TEST_CASE("normalize_weight rows sum to one", "[ref][moe]") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> uniform(0, 1);
  for (int64_t topk : {1, 2, 6, 9}) {
    std::vector<float> w(100 * topk);
    for (float &v : w)
      v = uniform(rng);
    NormalizeWeightResult r = normalize_weight_ref(f32({100, topk}, w));
    for (int64_t t = 0; t < 100; ++t) {
      double sum = 0;
      for (int64_t k = 0; k < topk; ++k)
        sum += r.normalized.at<float>({t, k});
      REQUIRE(std::abs(sum - 1) <= topk * std::ldexp(1.0, -23));
    }
  }
  CHECK(normalize_weight_ref(HostTensor::zeros(DType::f32, {0, 6}))
            .normalized.shape() == std::vector<int64_t>{0, 6});
}

TEST_CASE("normalize_weight checks its argument", "[ref][moe]") {
  CHECK_THROWS_WITH(
      normalize_weight_ref(HostTensor::zeros(DType::bf16, {2, 2})),
      "normalize_weight_ref: argument 'topk_weights' has dtype bf16; requires "
      "f32");
  CHECK_THROWS_WITH(normalize_weight_ref(HostTensor::zeros(DType::f32, {4})),
                    "normalize_weight_ref: argument 'topk_weights' has shape "
                    "[4]; requires a 2-D tensor");
}

TEST_CASE("group_count counts ids and ignores -1", "[ref][moe]") {
  HostTensor counts =
      group_count_ref(i64({3, 3}, {0, 2, -1, 2, 2, -1, -1, -1, 3}), 5);
  REQUIRE(counts.dtype() == DType::i32);
  CHECK(values<int32_t>(counts) == std::vector<int32_t>{1, 0, 3, 1, 0});
  CHECK(values<int32_t>(group_count_ref(HostTensor::zeros(DType::i64, {0, 4}),
                                        3)) == std::vector<int32_t>{0, 0, 0});
  // Property: the counts add up to the number of valid entries.
  std::mt19937 rng(37);
  HostTensor idx = random_topk_idx(rng, 500, 8, 32);
  int64_t valid = 0;
  for (int64_t v : values<int64_t>(idx))
    valid += v >= 0;
  int64_t total = 0;
  for (int32_t c : values<int32_t>(group_count_ref(idx, 32)))
    total += c;
  CHECK(total == valid);
}

TEST_CASE("group_count checks its arguments", "[ref][moe]") {
  const std::string fn = "group_count_ref: ";
  CHECK_THROWS_WITH(group_count_ref(HostTensor::zeros(DType::i32, {2, 2}), 4),
                    fn + "argument 'group_idx' has dtype i32; requires i64");
  CHECK_THROWS_WITH(group_count_ref(i64({1, 2}, {0, 4}), 4),
                    fn + "argument 'group_idx' holds 4 at [0, 1]; requires -1 "
                         "or an id in [0, 4)");
  CHECK_THROWS_WITH(group_count_ref(i64({1, 2}, {-2, 0}), 4),
                    fn + "argument 'group_idx' holds -2 at [0, 0]; requires -1 "
                         "or an id in [0, 4)");
  CHECK_THROWS_WITH(group_count_ref(i64({1, 2}, {0, 0}), 0),
                    fn + "argument 'num_groups' is 0; requires >= 1");
}

TEST_CASE("aux_fi is count * E / (T * num_aux_topk)", "[ref][moe]") {
  // Counts [2, 1, 0] over T = 2 rows.
  HostTensor fi = aux_fi_ref(i64({2, 2}, {0, 1, 0, -1}), 3, 2);
  REQUIRE(fi.dtype() == DType::f32);
  CHECK(values<float>(fi) == std::vector<float>{1.5f, 0.75f, 0});
  // Rounded once from the exact value: 1 * 3 / (3 * 1) is exactly 1 ...
  CHECK(values<float>(aux_fi_ref(i64({3, 1}, {0, 1, 2}), 3, 1)) ==
        std::vector<float>{1, 1, 1});
  // ... and 1 * 10 / 3 rounds to the nearest float.
  CHECK(aux_fi_ref(i64({3, 1}, {0, -1, -1}), 10, 1).at<float>({0}) ==
        static_cast<float>(10.0 / 3.0));
  // T = 0: zeros, no 0 / 0.
  CHECK(values<float>(aux_fi_ref(HostTensor::zeros(DType::i64, {0, 2}), 2,
                                 2)) == std::vector<float>{0, 0});
}

TEST_CASE("aux_fi checks its arguments", "[ref][moe]") {
  const std::string fn = "aux_fi_ref: ";
  HostTensor idx = i64({1, 2}, {0, 1});
  CHECK_THROWS_WITH(aux_fi_ref(idx, 0, 1),
                    fn + "argument 'num_experts' is 0; requires >= 1");
  CHECK_THROWS_WITH(aux_fi_ref(idx, 2, 0),
                    fn + "argument 'num_aux_topk' is 0; requires >= 1");
  CHECK_THROWS_WITH(aux_fi_ref(idx, 1, 1),
                    fn + "argument 'topk_idx' holds 1 at [0, 1]; requires -1 "
                         "or an id in [0, 1)");
  CHECK_THROWS_WITH(aux_fi_ref(HostTensor::zeros(DType::i64, {4}), 2, 1),
                    fn + "argument 'topk_idx' has shape [4]; requires a 2-D "
                         "tensor");
}

TEST_CASE("mask_indices_by_tp keeps and renumbers this TP rank's experts",
          "[ref][moe]") {
  // n = 16 experts on 4 EP ranks (4 each), 2 TP ranks: tp_rank 1 keeps EP
  // ranks 1 and 3: 4..7 -> 0..3 and 12..15 -> 4..7.
  std::vector<int64_t> all;
  for (int64_t v = -1; v < 16; ++v)
    all.push_back(v);
  std::vector<int64_t> expected = {-1, -1, -1, -1, -1, 0, 1, 2, 3,
                                   -1, -1, -1, -1, 4,  5, 6, 7};
  HostTensor masked = mask_indices_by_tp_ref(i64({1, 17}, all), 16, 4, 1, 2);
  REQUIRE(masked.dtype() == DType::i64);
  REQUIRE(masked.shape() == std::vector<int64_t>{1, 17});
  CHECK(values<int64_t>(masked) == expected);
  // tp_rank 0 keeps EP ranks 0 and 2.
  CHECK(
      values<int64_t>(mask_indices_by_tp_ref(i64({1, 17}, all), 16, 4, 0, 2)) ==
      std::vector<int64_t>{-1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7, -1, -1,
                           -1, -1});
  // The same on int32, whose dtype is kept.
  std::vector<int32_t> all32(all.begin(), all.end());
  HostTensor m32 = mask_indices_by_tp_ref(i32({1, 17}, all32), 16, 4, 1, 2);
  REQUIRE(m32.dtype() == DType::i32);
  std::vector<int32_t> got32 = values<int32_t>(m32);
  CHECK(std::vector<int64_t>(got32.begin(), got32.end()) == expected);
  // One TP rank: the identity on valid ids.
  CHECK(values<int64_t>(
            mask_indices_by_tp_ref(i64({1, 3}, {0, 5, -1}), 8, 2, 0, 1)) ==
        std::vector<int64_t>{0, 5, -1});
}

TEST_CASE("mask_indices_by_tp maps each TP rank's experts onto [0, n / TP)",
          "[ref][moe]") {
  for (auto [n, ep, tp] : {std::tuple<int64_t, int64_t, int64_t>{576, 64, 8},
                           {256, 8, 2},
                           {72, 8, 4}}) {
    std::vector<int64_t> all(n);
    for (int64_t v = 0; v < n; ++v)
      all[v] = v;
    std::set<int64_t> covered;
    for (int64_t rank = 0; rank < tp; ++rank) {
      std::set<int64_t> kept;
      for (int64_t v : values<int64_t>(
               mask_indices_by_tp_ref(i64({1, n}, all), n, ep, rank, tp)))
        if (v >= 0) {
          REQUIRE(v < n / tp);
          REQUIRE(kept.insert(v).second); // no two experts share an id
        }
      REQUIRE(int64_t(kept.size()) == n / tp);
    }
  }
}

TEST_CASE("mask_indices_by_tp checks its arguments", "[ref][moe]") {
  const std::string fn = "mask_indices_by_tp_ref: ";
  HostTensor idx = i64({1, 2}, {0, 1});
  CHECK_THROWS_WITH(
      mask_indices_by_tp_ref(HostTensor::zeros(DType::f32, {1, 2}), 8, 2, 0, 2),
      fn + "argument 'indices' has dtype f32; requires i32 or i64");
  CHECK_THROWS_WITH(
      mask_indices_by_tp_ref(HostTensor::zeros(DType::i64, {2}), 8, 2, 0, 2),
      fn + "argument 'indices' has shape [2]; requires a 2-D tensor");
  CHECK_THROWS_WITH(mask_indices_by_tp_ref(idx, 8, 0, 0, 2),
                    fn + "argument 'num_ep_ranks' is 0; requires >= 1");
  CHECK_THROWS_WITH(mask_indices_by_tp_ref(idx, 3, 4, 0, 2),
                    fn + "argument 'n' is 3; requires at least num_ep_ranks = "
                         "4 (one or more experts per rank)");
  CHECK_THROWS_WITH(mask_indices_by_tp_ref(idx, 8, 2, 0, 0),
                    fn + "argument 'num_tp_ranks' is 0; requires >= 1");
  CHECK_THROWS_WITH(mask_indices_by_tp_ref(idx, 8, 2, 2, 2),
                    fn + "argument 'tp_rank' is 2; requires 0 <= tp_rank < "
                         "num_tp_ranks = 2");
}

TEST_CASE("inplace_unique_group_indices keeps first occurrences",
          "[ref][moe]") {
  HostTensor g = i64({2, 6}, {3, 1, 3, -1, 1, 3, //
                              0, 0, 0, 5, 5, 0});
  inplace_unique_group_indices_ref(g, 8);
  CHECK(values<int64_t>(g) == std::vector<int64_t>{3, 1, -1, -1, -1, -1, //
                                                   0, -1, -1, 5, -1, -1});
  // Negative ids other than -1 stay, repeated or not.
  HostTensor n = i64({1, 5}, {-2, -2, 0, 0, -7});
  inplace_unique_group_indices_ref(n, 8);
  CHECK(values<int64_t>(n) == std::vector<int64_t>{-2, -2, 0, -1, -7});
  // Ids up to align(num_groups, 64) - 1 are accepted (the 128-bit mask).
  HostTensor big = i64({1, 3}, {127, 100, 127});
  inplace_unique_group_indices_ref(big, 72);
  CHECK(values<int64_t>(big) == std::vector<int64_t>{127, 100, -1});
  // Zero rows.
  HostTensor empty = HostTensor::zeros(DType::i64, {0, 4});
  inplace_unique_group_indices_ref(empty, 8);
  CHECK(empty.numel() == 0);
}

TEST_CASE("inplace_unique_group_indices leaves unique rows with the same ids",
          "[ref][moe]") {
  std::mt19937 rng(41);
  HostTensor g = HostTensor::zeros(DType::i64, {200, 9});
  for (int64_t i = 0; i < g.numel(); ++i)
    g.data<int64_t>()[i] = static_cast<int64_t>(rng() % 9) - 1; // -1..7
  HostTensor before = g.clone();
  inplace_unique_group_indices_ref(g, 8);
  for (int64_t r = 0; r < 200; ++r) {
    std::vector<int64_t> a = row<int64_t>(before, r), b = row<int64_t>(g, r);
    std::set<int64_t> ids_before, ids_after;
    for (int64_t k = 0; k < 9; ++k) {
      if (a[k] >= 0)
        ids_before.insert(a[k]);
      if (b[k] >= 0)
        REQUIRE(ids_after.insert(b[k]).second); // unique
      REQUIRE((b[k] == a[k] || b[k] == -1));
    }
    REQUIRE(ids_before == ids_after);
  }
  // Idempotent.
  HostTensor again = g.clone();
  inplace_unique_group_indices_ref(again, 8);
  CHECK(compare_exact(again, g) == "");
}

TEST_CASE("inplace_unique_group_indices checks its arguments", "[ref][moe]") {
  const std::string fn = "inplace_unique_group_indices_ref: ";
  HostTensor g = i64({1, 3}, {0, 64, 1});
  CHECK_THROWS_WITH(inplace_unique_group_indices_ref(g, 8),
                    fn + "argument 'group_indices' holds 64 at [0, 1]; "
                         "requires ids below align(num_groups, 64) = 64");
  // Nothing is changed when the check fails.
  CHECK(values<int64_t>(g) == std::vector<int64_t>{0, 64, 1});
  CHECK_THROWS_WITH(inplace_unique_group_indices_ref(g, 0),
                    fn + "argument 'num_groups' is 0; requires 1 to 128");
  CHECK_THROWS_WITH(inplace_unique_group_indices_ref(g, 129),
                    fn + "argument 'num_groups' is 129; requires 1 to 128");
  HostTensor i = HostTensor::zeros(DType::i32, {1, 3});
  CHECK_THROWS_WITH(inplace_unique_group_indices_ref(i, 8),
                    fn + "argument 'group_indices' has dtype i32; requires "
                         "i64");
  HostTensor t = HostTensor::zeros(DType::i64, {3, 2}).transposed(0, 1);
  CHECK_THROWS_WITH(inplace_unique_group_indices_ref(t, 8),
                    fn + "argument 'group_indices' has shape [2, 3] and "
                         "strides [1, 2]; requires a contiguous tensor");
}
