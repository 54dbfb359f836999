// expand_to_fused_test.cpp - Tests of expand_to_fused and
// expand_to_fused_with_sf (spec §1.6, §1.7): the scatter by hand, zero
// rows, the column-major sf layout and the argument checks.
#include "moe_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace moe_test;
using namespace tilejit::moe;

namespace {

// The mapping of get_fused_mapping_test's hand case: topk_idx
// [[0, 2], [2, -1], [0, 0]], 3 experts, alignment 4.
HostTensor hand_token_topk_to_pos() { return i32({3, 2}, {0, 4, 5, -1, 1, 2}); }
HostTensor hand_pos_to_expert() {
  return i32({8}, {0, 0, 0, -1, 2, 2, -1, -1});
}

HostTensor random_bytes(DType dtype, std::vector<int64_t> shape,
                        uint32_t seed) {
  HostTensor t = HostTensor::zeros(dtype, shape);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel() * int64_t(size_of(dtype)); ++i)
    t.raw()[i] = static_cast<std::byte>(rng());
  return t;
}

bool same_row(const HostTensor &a, int64_t ra, const HostTensor &b,
              int64_t rb) {
  const std::size_t bytes = size_of(a.dtype());
  for (int64_t i = 0; i < a.size(1); ++i)
    if (std::memcmp(a.raw() + a.offset({ra, i}) * bytes,
                    b.raw() + b.offset({rb, i}) * bytes, bytes) != 0)
      return false;
  return true;
}

bool zero_row(const HostTensor &a, int64_t r) {
  for (int64_t i = 0; i < a.size(1); ++i)
    if (element_as_double(a, std::vector<int64_t>{r, i}) != 0)
      return false;
  return true;
}

} // namespace

TEST_CASE("expand_to_fused copies token rows to their positions",
          "[ref][moe]") {
  HostTensor x = i32({3, 2}, {1, 2, 3, 4, 5, 6});
  HostTensor out =
      expand_to_fused_ref(x, hand_token_topk_to_pos(), hand_pos_to_expert());
  REQUIRE(out.dtype() == DType::i32);
  REQUIRE(out.shape() == std::vector<int64_t>{8, 2});
  CHECK(values<int32_t>(out) ==
        std::vector<int32_t>{1, 2, 5, 6, 5, 6, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0});
  // Any dtype, bit for bit (random bf16 bits include NaN payloads).
  HostTensor b = random_bytes(DType::bf16, {3, 7}, 1);
  out = expand_to_fused_ref(b, hand_token_topk_to_pos(), hand_pos_to_expert());
  const int64_t source[8] = {0, 2, 2, -1, 0, 1, -1, -1};
  for (int64_t p = 0; p < 8; ++p)
    CHECK((source[p] < 0 ? zero_row(out, p) : same_row(out, p, b, source[p])));
}

TEST_CASE("expand_to_fused zeroes positions no token targets", "[ref][moe]") {
  // Position 1 belongs to expert 0 but no (t, k) points at it: the original
  // leaves it uninitialised, the reference zero-fills it.
  HostTensor out = expand_to_fused_ref(f32({1, 3}, {1, 2, 3}), i32({1, 1}, {0}),
                                       i32({2}, {0, 0}));
  CHECK(values<float>(out) == std::vector<float>{1, 2, 3, 0, 0, 0});
  // Zero tokens, zero positions.
  out = expand_to_fused_ref(HostTensor::zeros(DType::bf16, {0, 64}),
                            HostTensor::zeros(DType::i32, {0, 6}),
                            HostTensor::zeros(DType::i32, {0}));
  CHECK(out.shape() == std::vector<int64_t>{0, 64});
}

TEST_CASE("expand_to_fused_with_sf copies the sf rows too", "[ref][moe]") {
  HostTensor data = random_bytes(DType::e4m3, {3, 256}, 2);
  HostTensor sf = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  ExpandToFusedWithSfResult r = expand_to_fused_with_sf_ref(
      {data, sf}, 128, hand_token_topk_to_pos(), hand_pos_to_expert());
  CHECK(compare_exact(r.out, expand_to_fused_ref(data, hand_token_topk_to_pos(),
                                                 hand_pos_to_expert())) == "");
  REQUIRE(r.out_sf.dtype() == DType::f32);
  REQUIRE(r.out_sf.shape() == std::vector<int64_t>{8, 2});
  CHECK(r.out_sf.strides() == std::vector<int64_t>{2, 1});
  CHECK(values<float>(r.out_sf) ==
        std::vector<float>{1, 2, 5, 6, 5, 6, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0});
}

TEST_CASE("expand_to_fused_with_sf writes a TMA-aligned column-major sf",
          "[ref][moe]") {
  // Alignment 2 mapping of the hand case: N = 6 positions, so the sf
  // storage is (hidden_sf, align(6, 4) = 8), returned with strides (1, 8).
  HostTensor token_topk_to_pos = i32({3, 2}, {0, 4, 5, -1, 1, 2});
  HostTensor pos_to_expert = i32({6}, {0, 0, 0, -1, 2, 2});
  HostTensor data = random_bytes(DType::e4m3, {3, 256}, 3);
  // npc 32: 8 groups -> 2 packed int32 words per row.
  HostTensor sf = i32({3, 2}, {0x7f7f7f7f, 0x01020304, 0x11111111, 0x22222222,
                               0x33333333, 0x44444444});
  ExpandToFusedWithSfResult r = expand_to_fused_with_sf_ref(
      {data, sf}, 32, token_topk_to_pos, pos_to_expert, true);
  REQUIRE(r.out_sf.dtype() == DType::i32);
  REQUIRE(r.out_sf.shape() == std::vector<int64_t>{6, 2});
  CHECK(r.out_sf.strides() == std::vector<int64_t>{1, 8});
  const int64_t source[6] = {0, 2, 2, -1, 0, 1};
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t j = 0; j < 2; ++j)
      CHECK(r.out_sf.at<int32_t>({p, j}) ==
            (source[p] < 0 ? 0 : sf.at<int32_t>({source[p], j})));
  // An f32 sf may be column-major too.
  HostTensor sf32 = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  r = expand_to_fused_with_sf_ref({data, sf32}, 128, token_topk_to_pos,
                                  pos_to_expert, true);
  CHECK(r.out_sf.strides() == std::vector<int64_t>{1, 8});
  CHECK(r.out_sf.at<float>({1, 1}) == 6);
  CHECK(r.out_sf.at<float>({3, 0}) == 0);
}

TEST_CASE("expand_to_fused checks its arguments", "[ref][moe]") {
  const std::string fn = "expand_to_fused_ref: ";
  HostTensor x = HostTensor::zeros(DType::bf16, {3, 4});
  HostTensor ttp = hand_token_topk_to_pos(), pte = hand_pos_to_expert();
  CHECK_THROWS_WITH(
      expand_to_fused_ref(HostTensor::zeros(DType::bf16, {12}), ttp, pte),
      fn + "argument 'x' has shape [12]; requires a 2-D tensor");
  CHECK_THROWS_WITH(
      expand_to_fused_ref(
          HostTensor::zeros(DType::bf16, {4, 3}).transposed(0, 1), ttp, pte),
      fn + "argument 'x' has shape [3, 4] and strides [1, 3]; requires a "
           "contiguous tensor");
  CHECK_THROWS_WITH(
      expand_to_fused_ref(x, HostTensor::zeros(DType::i64, {3, 2}), pte),
      fn + "argument 'token_topk_to_pos' has dtype i64; requires i32");
  CHECK_THROWS_WITH(
      expand_to_fused_ref(x, HostTensor::zeros(DType::i32, {2, 2}), pte),
      fn + "argument 'token_topk_to_pos' has shape [2, 2]; requires 3 rows (T, "
           "the rows of 'x')");
  CHECK_THROWS_WITH(
      expand_to_fused_ref(x, ttp, HostTensor::zeros(DType::i32, {8, 1})),
      fn + "argument 'pos_to_expert' has shape [8, 1]; requires a 1-D tensor");
  CHECK_THROWS_WITH(
      expand_to_fused_ref(x, ttp, HostTensor::zeros(DType::i32, {5})),
      fn + "argument 'token_topk_to_pos' holds 5 at [1, 0]; requires a "
           "negative value (unused) or a position below 5 (the size of "
           "'pos_to_expert')");
}

TEST_CASE("expand_to_fused_with_sf checks its arguments", "[ref][moe]") {
  const std::string fn = "expand_to_fused_with_sf_ref: ";
  HostTensor data = HostTensor::zeros(DType::e4m3, {3, 256});
  HostTensor ttp = hand_token_topk_to_pos(), pte = hand_pos_to_expert();
  HostTensor sf = HostTensor::zeros(DType::f32, {3, 2});
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref({HostTensor::zeros(DType::e4m3, {768}), sf},
                                  128, ttp, pte),
      fn + "argument 'x.data' has shape [768]; requires a 2-D tensor");
  CHECK_THROWS_WITH(expand_to_fused_with_sf_ref({data, sf}, 64, ttp, pte),
                    fn + "argument 'num_per_channels' is 64; requires 32 or "
                         "128");
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref(
          {data, HostTensor::zeros(DType::f32, {3, 2}).transposed(0, 1)}, 128,
          ttp, pte),
      fn + "argument 'x.sf' has shape [2, 3] and strides [1, 2]; requires a "
           "contiguous tensor");
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref(
          {data, HostTensor::zeros(DType::bf16, {3, 2})}, 128, ttp, pte),
      fn + "argument 'x.sf' has dtype bf16; requires f32 or i32 (packed "
           "UE8M0)");
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref({data, HostTensor::zeros(DType::i32, {3, 2})},
                                  32, ttp, pte),
      fn + "argument 'x.sf' has dtype i32 (packed UE8M0); requires "
           "use_tma_aligned_col_major_sf");
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref({data, HostTensor::zeros(DType::i32, {3, 8})},
                                  32, ttp, pte, true),
      fn + "argument 'x.sf' has shape [3, 8]; requires [3, 2] (T, "
           "ceil(ceil(H / num_per_channels) / 4))");
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref({data, HostTensor::zeros(DType::f32, {3, 8})},
                                  128, ttp, pte),
      fn + "argument 'x.sf' has shape [3, 8]; requires [3, 2] (T, ceil(H / "
           "num_per_channels))");
  CHECK_THROWS_WITH(
      expand_to_fused_with_sf_ref({data, sf}, 128,
                                  HostTensor::zeros(DType::i32, {2, 2}), pte),
      fn + "argument 'token_topk_to_pos' has shape [2, 2]; requires 3 rows (T, "
           "the rows of 'x')");
}
