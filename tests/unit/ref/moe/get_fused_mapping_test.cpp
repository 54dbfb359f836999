// get_fused_mapping_test.cpp - Tests of get_fused_mapping (spec §1.5): a
// hand-computed layout, the layout contract on random routings, explicit
// and automatic sizes, zero tokens and the argument checks.
#include "moe_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace moe_test;
using namespace tilejit::moe;

TEST_CASE("get_fused_mapping lays out a small routing by hand", "[ref][moe]") {
  // Expert 0 gets flat entries 0, 4, 5; expert 1 none; expert 2 entries 1,
  // 2. Alignment 4: segments [0, 4), [4, 4), [4, 8).
  HostTensor topk_idx = i64({3, 2}, {0, 2, 2, -1, 0, 0});
  FusedMapping m = get_fused_mapping_ref(topk_idx, 3, 0, 4);
  for (const HostTensor *t :
       {&m.pos_to_expert, &m.pos_to_token, &m.pos_to_token_topk,
        &m.token_topk_to_pos, &m.expert_start, &m.expert_end,
        &m.num_tokens_per_expert}) {
    CHECK(t->dtype() == DType::i32);
    CHECK(t->is_contiguous());
  }
  CHECK(values<int32_t>(m.pos_to_expert) ==
        std::vector<int32_t>{0, 0, 0, -1, 2, 2, -1, -1});
  CHECK(values<int32_t>(m.pos_to_token_topk) ==
        std::vector<int32_t>{0, 4, 5, -1, 1, 2, -1, -1});
  CHECK(values<int32_t>(m.pos_to_token) ==
        std::vector<int32_t>{0, 2, 2, -1, 0, 1, -1, -1});
  CHECK(m.token_topk_to_pos.shape() == std::vector<int64_t>{3, 2});
  CHECK(values<int32_t>(m.token_topk_to_pos) ==
        std::vector<int32_t>{0, 4, 5, -1, 1, 2});
  CHECK(values<int32_t>(m.expert_start) == std::vector<int32_t>{0, 4, 4});
  CHECK(values<int32_t>(m.expert_end) == std::vector<int32_t>{4, 4, 8});
  // Aligned counts, not the raw 3, 0, 2.
  CHECK(values<int32_t>(m.num_tokens_per_expert) ==
        std::vector<int32_t>{4, 0, 4});
  CHECK(m.num_tokens_per_expert_list == std::vector<int64_t>{4, 0, 4});
  // Alignment 1: no padding.
  m = get_fused_mapping_ref(topk_idx, 3, 0, 1);
  CHECK(values<int32_t>(m.pos_to_expert) ==
        std::vector<int32_t>{0, 0, 0, 2, 2});
  CHECK(values<int32_t>(m.expert_end) == std::vector<int32_t>{3, 3, 5});
}

TEST_CASE("get_fused_mapping with an explicit size pads the tail",
          "[ref][moe]") {
  HostTensor topk_idx = i64({2, 2}, {1, -1, 1, 0});
  FusedMapping m = get_fused_mapping_ref(topk_idx, 2, 7, 2);
  CHECK(values<int32_t>(m.pos_to_expert) ==
        std::vector<int32_t>{0, -1, 1, 1, -1, -1, -1});
  CHECK(values<int32_t>(m.pos_to_token) ==
        std::vector<int32_t>{1, -1, 0, 1, -1, -1, -1});
  // No sync happened, so the host list is empty.
  CHECK(m.num_tokens_per_expert_list.empty());
  m = get_fused_mapping_ref(topk_idx, 2, 4, 2, true);
  CHECK(m.pos_to_expert.numel() == 4);
  CHECK(m.num_tokens_per_expert_list.empty());
  // force_no_sync with N = 0 is fine when nothing is routed.
  m = get_fused_mapping_ref(i64({1, 2}, {-1, -1}), 2, 0, 2, true);
  CHECK(m.pos_to_expert.numel() == 0);
  CHECK(values<int32_t>(m.token_topk_to_pos) == std::vector<int32_t>{-1, -1});
}

TEST_CASE("get_fused_mapping with zero tokens yields zeros", "[ref][moe]") {
  FusedMapping m =
      get_fused_mapping_ref(HostTensor::zeros(DType::i64, {0, 6}), 4, 0, 64);
  CHECK(m.pos_to_expert.shape() == std::vector<int64_t>{0});
  CHECK(m.token_topk_to_pos.shape() == std::vector<int64_t>{0, 6});
  CHECK(values<int32_t>(m.expert_start) == std::vector<int32_t>{0, 0, 0, 0});
  CHECK(values<int32_t>(m.expert_end) == std::vector<int32_t>{0, 0, 0, 0});
  CHECK(values<int32_t>(m.num_tokens_per_expert) ==
        std::vector<int32_t>{0, 0, 0, 0});
  CHECK(m.num_tokens_per_expert_list == std::vector<int64_t>{0, 0, 0, 0});
}

TEST_CASE("get_fused_mapping keeps the layout contract on random routings",
          "[ref][moe]") {
  std::mt19937 rng(23);
  for (auto [experts, topk] :
       {std::pair<int64_t, int64_t>{9, 6}, {32, 8}, {4, 9}, {1, 1}})
    for (int64_t alignment : {1, 16, 64, 128}) {
      const int64_t tokens = 300;
      HostTensor topk_idx = random_topk_idx(rng, tokens, topk, experts);
      FusedMapping m = get_fused_mapping_ref(topk_idx, experts, 0, alignment);
      const int64_t n = m.pos_to_expert.numel();
      std::vector<int64_t> count(experts, 0);
      for (int64_t v : values<int64_t>(topk_idx))
        if (v >= 0)
          ++count[v];
      int64_t start = 0;
      for (int64_t e = 0; e < experts; ++e) {
        const int64_t aligned =
            (count[e] + alignment - 1) / alignment * alignment;
        REQUIRE(m.expert_start.at<int32_t>({e}) == start);
        REQUIRE(m.expert_end.at<int32_t>({e}) == start + aligned);
        REQUIRE(m.num_tokens_per_expert.at<int32_t>({e}) == aligned);
        REQUIRE(m.num_tokens_per_expert_list[e] == aligned);
        // The first count_e positions of the segment are expert e, in
        // ascending flat order; the rest is padding.
        for (int64_t p = start; p < start + aligned; ++p) {
          const bool filled = p < start + count[e];
          REQUIRE(m.pos_to_expert.at<int32_t>({p}) == (filled ? e : -1));
          if (filled && p > start)
            REQUIRE(m.pos_to_token_topk.at<int32_t>({p - 1}) <
                    m.pos_to_token_topk.at<int32_t>({p}));
        }
        start += aligned;
      }
      REQUIRE(n == start);
      int64_t valid = 0;
      for (int64_t p = 0; p < n; ++p) {
        const int32_t f = m.pos_to_token_topk.at<int32_t>({p});
        if (m.pos_to_expert.at<int32_t>({p}) < 0) {
          REQUIRE(f == -1);
          REQUIRE(m.pos_to_token.at<int32_t>({p}) == -1);
          continue;
        }
        ++valid;
        REQUIRE(m.token_topk_to_pos.at<int32_t>({f / topk, f % topk}) == p);
        REQUIRE(topk_idx.at<int64_t>({f / topk, f % topk}) ==
                m.pos_to_expert.at<int32_t>({p}));
        REQUIRE(m.pos_to_token.at<int32_t>({p}) == f / topk);
      }
      // Every routed (t, k) has a position; every -1 has none.
      int64_t routed = 0;
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t k = 0; k < topk; ++k) {
          const bool used = topk_idx.at<int64_t>({t, k}) >= 0;
          routed += used;
          REQUIRE((m.token_topk_to_pos.at<int32_t>({t, k}) >= 0) == used);
        }
      REQUIRE(valid == routed);
    }
}

TEST_CASE("get_fused_mapping checks its arguments", "[ref][moe]") {
  const std::string fn = "get_fused_mapping_ref: ";
  HostTensor idx = i64({2, 2}, {0, 1, 1, -1});
  CHECK_THROWS_WITH(
      get_fused_mapping_ref(HostTensor::zeros(DType::i32, {2, 2}), 2, 0, 1),
      fn + "argument 'topk_idx' has dtype i32; requires i64");
  CHECK_THROWS_WITH(
      get_fused_mapping_ref(HostTensor::zeros(DType::i64, {4}), 2, 0, 1),
      fn + "argument 'topk_idx' has shape [4]; requires a 2-D tensor");
  CHECK_THROWS_WITH(
      get_fused_mapping_ref(
          HostTensor::zeros(DType::i64, {2, 3}).transposed(0, 1), 2, 0, 1),
      fn + "argument 'topk_idx' has shape [3, 2] and strides [1, 3]; requires "
           "a contiguous tensor");
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 0, 0, 1),
                    fn + "argument 'num_experts' is 0; requires 1 to 1024");
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 1025, 0, 1),
                    fn + "argument 'num_experts' is 1025; requires 1 to 1024");
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 2, 0, 0),
                    fn + "argument 'alignment' is 0; requires >= 1");
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 2, -1, 1),
                    fn + "argument 'num_expanded_tokens' is -1; requires >= 0");
  CHECK_THROWS_WITH(get_fused_mapping_ref(i64({1, 2}, {0, -2}), 2, 0, 1),
                    fn + "argument 'topk_idx' holds -2 at [0, 1]; requires -1 "
                         "or an expert in [0, 2)");
  CHECK_THROWS_WITH(get_fused_mapping_ref(i64({1, 2}, {2, 0}), 2, 0, 1),
                    fn + "argument 'topk_idx' holds 2 at [0, 0]; requires -1 "
                         "or an expert in [0, 2)");
  // Aligned counts 4 + 4 = 8 positions are needed.
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 2, 7, 4),
                    fn + "argument 'num_expanded_tokens' is 7; requires at "
                         "least 8 (the sum of the aligned expert counts)");
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 2, 0, 4, true),
                    fn + "argument 'num_expanded_tokens' is 0 with "
                         "force_no_sync; requires at least 8 (the sum of the "
                         "aligned expert counts)");
  CHECK_NOTHROW(get_fused_mapping_ref(idx, 2, 8, 4, true));
  // The maps are int32: at most 2^31 - 1 entries and positions. (The view
  // is never read: the shape check comes first.)
  CHECK_THROWS_WITH(get_fused_mapping_ref(idx, 2, int64_t(1) << 31, 1),
                    fn + "argument 'num_expanded_tokens' is 2147483648; "
                         "requires fewer than 2^31 positions (the maps are "
                         "int32)");
  int64_t storage = 0;
  const int64_t shape[2] = {int64_t(1) << 16, int64_t(1) << 15};
  const int64_t strides[2] = {int64_t(1) << 15, 1};
  HostTensor huge = HostTensor::view(&storage, DType::i64, shape, strides);
  CHECK_THROWS_WITH(get_fused_mapping_ref(huge, 2, 0, 1),
                    fn + "argument 'topk_idx' has shape [65536, 32768]; "
                         "requires fewer than 2^31 entries (the maps are "
                         "int32)");
}
