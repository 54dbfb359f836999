// reduce_fused_test.cpp - Tests of reduce_fused (spec §1.8): the FMA chain
// in slot order, weights times x_sf, the final sf, bf16 and e4m3 rounding,
// expand-then-reduce, and the argument checks.
#include "moe_test_util.h"

#include "common/convert.h"
#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace moe_test;
using namespace tilejit::moe;

namespace {

/// (rows, 256) with every element of row r equal to v[r].
HostTensor constant_rows(DType dtype, std::vector<float> v) {
  const int64_t rows = static_cast<int64_t>(v.size());
  HostTensor t = HostTensor::zeros(dtype, {rows, 256});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < 256; ++i) {
      if (dtype == DType::f32)
        t.at<float>({r, i}) = v[r];
      else
        t.at<uint16_t>({r, i}) = tilejit::ref::f32_to_bf16(v[r]);
    }
  return t;
}

/// Column 0 of every row, as float.
std::vector<float> column0(const HostTensor &t) {
  std::vector<float> c;
  for (int64_t r = 0; r < t.size(0); ++r)
    c.push_back(
        static_cast<float>(element_as_double(t, std::vector<int64_t>{r, 0})));
  return c;
}

} // namespace

TEST_CASE("reduce_fused sums weighted rows in slot order", "[ref][moe]") {
  HostTensor x = constant_rows(DType::f32, {1, 2, 4});
  HostTensor ttp = i32({2, 2}, {0, 2, -1, 1});
  HostTensor w = f32({2, 2}, {0.5f, 2, 3, 0.25f});
  HostTensor out = reduce_fused_ref(x, w, ttp);
  REQUIRE(out.dtype() == DType::f32);
  REQUIRE(out.shape() == std::vector<int64_t>{2, 256});
  // Token 0: 0.5 * 1 + 2 * 4; token 1 skips slot 0 (-1): 0.25 * 2.
  CHECK(column0(out) == std::vector<float>{8.5f, 0.5f});
  CHECK(out.at<float>({0, 255}) == 8.5f);
  // Without weights every scale is 1.
  CHECK(column0(reduce_fused_ref(x, std::nullopt, ttp)) ==
        std::vector<float>{5, 2});
  // With x_sf the scale is weight * x_sf[p].
  std::pair<HostTensor, HostTensor> quant{x, f32({3}, {2, 3, 0.5f})};
  CHECK(column0(reduce_fused_ref(quant, w, ttp)) ==
        std::vector<float>{5, 1.5f});
}

TEST_CASE("reduce_fused accumulates with a fused multiply-add", "[ref][moe]") {
  // Row 0 holds 1 + 2^-11, row 1 holds 1 + 2^-12; weights 1 and
  // -(1 + 2^-12). fma((1 + 2^-12), -(1 + 2^-12), 1 + 2^-11) = -2^-24
  // exactly, while a rounded product (-(1 + 2^-11), a tie to even) would
  // cancel to 0.
  const float a = 1.0f + std::ldexp(1.0f, -11),
              b = 1.0f + std::ldexp(1.0f, -12);
  HostTensor out =
      reduce_fused_ref(constant_rows(DType::f32, {a, b}),
                       f32({1, 2}, {1.0f, -b}), i32({1, 2}, {0, 1}));
  CHECK(out.at<float>({0, 0}) == -std::ldexp(1.0f, -24));
  // Slot order: the same pair in the other slot order starts from b * -b.
  out = reduce_fused_ref(constant_rows(DType::f32, {a, b}),
                         f32({1, 2}, {-b, 1.0f}), i32({1, 2}, {1, 0}));
  CHECK(out.at<float>({0, 0}) == std::fma(a, 1.0f, std::fma(b, -b, 0.0f)));
}

TEST_CASE("reduce_fused rounds bf16 output to nearest even", "[ref][moe]") {
  // 1 + 2^-8 is halfway between the bf16 values 1 and 1 + 2^-7: ties to 1.
  HostTensor out =
      reduce_fused_ref(constant_rows(DType::bf16, {1.0f, std::ldexp(1.0f, -8)}),
                       std::nullopt, i32({1, 2}, {0, 1}));
  REQUIRE(out.dtype() == DType::bf16);
  CHECK(out.at<uint16_t>({0, 0}) == 0x3F80);
  // 1 + 3 * 2^-9 is above the halfway point: rounds up to 1 + 2^-7.
  out = reduce_fused_ref(
      constant_rows(DType::bf16, {1.0f, 3 * std::ldexp(1.0f, -9)}),
      std::nullopt, i32({1, 2}, {0, 1}));
  CHECK(out.at<uint16_t>({0, 0}) == 0x3F81);
}

TEST_CASE("reduce_fused with e4m3 output scales by sf and saturates",
          "[ref][moe]") {
  HostTensor x = constant_rows(DType::f32, {1, 4, 1000, -1000});
  HostTensor ttp = i32({3, 2}, {0, 1, 2, -1, 3, -1});
  HostTensor out =
      reduce_fused_ref(x, std::nullopt, ttp, "e4m3", f32({1}, {0.5f}));
  REQUIRE(out.dtype() == DType::e4m3);
  // (1 + 4) * 0.5 = 2.5 -> 0x42; 1000 * 0.5 = 500 saturates to 448 (0x7E),
  // -500 to -448 (0xFE): the original's __NV_SATFINITE.
  CHECK(out.at<uint8_t>({0, 0}) == 0x42);
  CHECK(out.at<uint8_t>({1, 0}) == 0x7E);
  CHECK(out.at<uint8_t>({2, 0}) == 0xFE);
  // 4.25 is halfway between e4m3 4.0 and 4.5: ties to even (4.0 = 0x48).
  out = reduce_fused_ref(constant_rows(DType::f32, {4.25f}), std::nullopt,
                         i32({1, 1}, {0}), "e4m3");
  CHECK(out.at<uint8_t>({0, 0}) == 0x48);
}

TEST_CASE("reduce_fused writes into a given out tensor", "[ref][moe]") {
  HostTensor out = HostTensor::zeros(DType::f32, {2, 256});
  HostTensor r =
      reduce_fused_ref(constant_rows(DType::f32, {1, 2, 4}), std::nullopt,
                       i32({2, 2}, {0, 2, -1, 1}), "", std::nullopt, out);
  CHECK(r.raw() == out.raw());
  CHECK(out.at<float>({0, 7}) == 5);
  CHECK(out.at<float>({1, 7}) == 2);
  // Zero tokens.
  CHECK(reduce_fused_ref(constant_rows(DType::f32, {1}), std::nullopt,
                         HostTensor::zeros(DType::i32, {0, 4}))
            .shape() == std::vector<int64_t>{0, 256});
}

TEST_CASE("expand then reduce reproduces the token sums", "[ref][moe]") {
  std::mt19937 rng(29);
  const int64_t tokens = 50, topk = 6, experts = 9, hidden = 256;
  HostTensor topk_idx = random_topk_idx(rng, tokens, topk, experts);
  FusedMapping m = get_fused_mapping_ref(topk_idx, experts, 0, 16);
  HostTensor x = HostTensor::zeros(DType::f32, {tokens, hidden});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] =
        static_cast<float>(static_cast<int>(rng() % 201) - 100);
  HostTensor fused =
      expand_to_fused_ref(x, m.token_topk_to_pos, m.pos_to_expert);
  // Weights 1: each token's row times its number of routed slots (small
  // integers, so exact).
  HostTensor sum = reduce_fused_ref(fused, std::nullopt, m.token_topk_to_pos);
  // Normalised weights over the routed slots: the row itself, within fp32.
  HostTensor w = HostTensor::zeros(DType::f32, {tokens, topk});
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t k = 0; k < topk; ++k)
      if (topk_idx.at<int64_t>({t, k}) >= 0)
        w.at<float>({t, k}) = 0.1f + static_cast<float>(rng() % 100) / 100;
  HostTensor mean = reduce_fused_ref(fused, normalize_weight_ref(w).normalized,
                                     m.token_topk_to_pos);
  for (int64_t t = 0; t < tokens; ++t) {
    int64_t routed = 0;
    for (int64_t k = 0; k < topk; ++k)
      routed += topk_idx.at<int64_t>({t, k}) >= 0;
    for (int64_t i = 0; i < hidden; ++i) {
      REQUIRE(sum.at<float>({t, i}) == routed * x.at<float>({t, i}));
      REQUIRE(mean.at<float>({t, i}) ==
              Approx(x.at<float>({t, i})).epsilon(1e-6).margin(1e-5));
    }
  }
}

TEST_CASE("reduce_fused checks its arguments", "[ref][moe]") {
  const std::string fn = "reduce_fused_ref: ";
  HostTensor x = HostTensor::zeros(DType::f32, {3, 256});
  HostTensor ttp = i32({2, 2}, {0, 2, -1, 1});
  CHECK_THROWS_WITH(reduce_fused_ref(HostTensor::zeros(DType::e4m3, {3, 256}),
                                     std::nullopt, ttp),
                    fn + "argument 'x' has dtype e4m3; requires f32 or bf16");
  CHECK_THROWS_WITH(
      reduce_fused_ref(HostTensor::zeros(DType::f32, {768}), std::nullopt, ttp),
      fn + "argument 'x' has shape [768]; requires a 2-D tensor");
  CHECK_THROWS_WITH(
      reduce_fused_ref(HostTensor::zeros(DType::f32, {256, 3}).transposed(0, 1),
                       std::nullopt, ttp),
      fn + "argument 'x' has shape [3, 256] and strides [1, 3]; requires a "
           "contiguous tensor");
  CHECK_THROWS_WITH(
      reduce_fused_ref(HostTensor::zeros(DType::f32, {3, 128}), std::nullopt,
                       ttp),
      fn + "argument 'x' has shape [3, 128]; requires a hidden size that is a "
           "multiple of 256");
  CHECK_THROWS_WITH(
      reduce_fused_ref(std::pair{x, HostTensor::zeros(DType::f32, {2})},
                       std::nullopt, ttp),
      fn + "argument 'x_sf' has shape [2]; requires [3] (N, the rows of 'x')");
  CHECK_THROWS_WITH(
      reduce_fused_ref(std::pair{x, HostTensor::zeros(DType::bf16, {3})},
                       std::nullopt, ttp),
      fn + "argument 'x_sf' has dtype bf16; requires f32");
  CHECK_THROWS_WITH(
      reduce_fused_ref(x, std::nullopt, HostTensor::zeros(DType::i64, {2, 2})),
      fn + "argument 'token_topk_to_pos' has dtype i64; requires i32");
  CHECK_THROWS_WITH(
      reduce_fused_ref(x, HostTensor::zeros(DType::f32, {2, 3}), ttp),
      fn + "argument 'topk_weights' has shape [2, 3]; requires [2, 2] (T, K, "
           "the shape of 'token_topk_to_pos')");
  CHECK_THROWS_WITH(reduce_fused_ref(x, std::nullopt, ttp, "e5m2"),
                    fn + "argument 'fp8_format' is 'e5m2'; requires '' or "
                         "'e4m3'");
  CHECK_THROWS_WITH(
      reduce_fused_ref(x, std::nullopt, ttp, "", f32({1}, {1})),
      fn + "argument 'sf' is given with fp8_format ''; requires fp8_format "
           "'e4m3' (only FP8 output takes sf)");
  CHECK_THROWS_WITH(
      reduce_fused_ref(x, std::nullopt, ttp, "e4m3", f32({2}, {1, 1})),
      fn + "argument 'sf' has shape [2]; requires [1] (one scale)");
  CHECK_THROWS_WITH(reduce_fused_ref(x, std::nullopt, ttp, "e4m3", std::nullopt,
                                     HostTensor::zeros(DType::f32, {2, 256})),
                    fn + "argument 'out' has dtype f32; requires e4m3");
  CHECK_THROWS_WITH(reduce_fused_ref(x, std::nullopt, ttp, "", std::nullopt,
                                     HostTensor::zeros(DType::f32, {3, 256})),
                    fn + "argument 'out' has shape [3, 256]; requires [2, 256] "
                         "(T, H)");
  CHECK_THROWS_WITH(
      reduce_fused_ref(
          x, std::nullopt, ttp, "", std::nullopt,
          HostTensor::zeros(DType::f32, {256, 2}).transposed(0, 1)),
      fn + "argument 'out' has shape [2, 256] and strides [1, 2]; requires a "
           "contiguous tensor");
  CHECK_THROWS_WITH(
      reduce_fused_ref(x, std::nullopt, i32({1, 2}, {0, 3})),
      fn + "argument 'token_topk_to_pos' holds 3 at [0, 1]; requires a "
           "negative value (unused) or a row of 'x' below 3");
}
