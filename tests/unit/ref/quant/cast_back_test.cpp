// cast_back_test.cpp - cast_back and per_token_cast_back (§6): hand cases,
// block indexing, the three SF input layouts, M = 0 and argument checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

TEST_CASE("cast_back: products in float32, bf16 by RNE", "[ref][quant]") {
  HostTensor data = HostTensor::zeros(DType::e4m3, {1, 64});
  data.at<uint8_t>({0, 0}) = 0x38; // 1
  data.at<uint8_t>({0, 1}) = 0xF6; // -224
  data.at<uint8_t>({0, 2}) = 0x01; // 2^-9
  data.at<uint8_t>({0, 3}) = 0x39; // 1.125
  // sf = 1 + 2^-8: 1.125 * sf = 1.12939453125 needs RNE to bf16 (1.1328125).
  const float sf = 1.00390625f;
  QuantTensor q{data, f32(1, 1, {sf})};
  HostTensor a = cast_back_ref(q, "fp32", {1, 64});
  CHECK(a.dtype() == DType::f32);
  CHECK(a.shape() == shape_t{1, 64});
  CHECK(get(a, 0, 0) == sf);
  CHECK(get(a, 0, 1) == -224.875f);
  CHECK(get(a, 0, 2) == std::ldexp(sf, -9));
  CHECK(get(a, 0, 3) == 1.12939453125f);
  HostTensor b = per_token_cast_back_ref(q, "bf16", 64);
  CHECK(b.dtype() == DType::bf16);
  CHECK(get(b, 0, 3) == 1.1328125f);
  CHECK(get(b, 0, 1) == -225.0f); // -224.875 -> bf16 -225 (8 bits)
  CHECK(get(b, 0, 4) == 0.0f);
}

TEST_CASE("cast_back: fp4 decodes with code 8 as -0.0", "[ref][quant]") {
  HostTensor data = HostTensor::zeros(DType::i8, {1, 32});
  data.at<uint8_t>({0, 0}) = 0x8F; // low: -6, high: -0
  data.at<uint8_t>({0, 1}) = 0x71; // low: 0.5, high: 6
  QuantTensor q{data, f32(1, 1, {2.0f})};
  HostTensor a = cast_back_ref(q, "fp32", {1, 64});
  CHECK(get(a, 0, 0) == -12.0f);
  CHECK(get(a, 0, 1) == 0.0f);
  CHECK(std::signbit(get(a, 0, 1)));
  CHECK(get(a, 0, 2) == 1.0f);
  CHECK(get(a, 0, 3) == 12.0f);
  HostTensor b = cast_back_ref(q, "bf16", {1, 64});
  CHECK(b.at<uint16_t>({0, 1}) == 0x8000);
}

TEST_CASE("cast_back: sf[m / bm, k / bk] for 2-D blocks and every SF "
          "layout",
          "[ref][quant]") {
  const int64_t M = 5, K = 128;
  HostTensor data = HostTensor::zeros(DType::e4m3, {M, K});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < K; ++j)
      data.at<uint8_t>({i, j}) = 0x38; // 1.0
  // Blocks (2, 32): sf (3, 4), value 2^(m - k).
  HostTensor row = alloc_sf(3, 4, SfLayout::row_major);
  HostTensor col = alloc_sf(3, 4, SfLayout::col_major);
  HostTensor packed = alloc_sf(3, 4, SfLayout::packed_ue8m0);
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t k = 0; k < 4; ++k) {
      const int e = static_cast<int>(m - k);
      const SfAndInv s{std::ldexp(1.0f, e), 0.0f,
                       static_cast<uint8_t>(127 + e)};
      store_sf(row, m, k, s);
      store_sf(col, m, k, s);
      store_sf(packed, m, k, s);
    }
  HostTensor a = cast_back_ref({data, row}, "fp32", {2, 32});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < K; ++j)
      REQUIRE(get(a, i, j) ==
              std::ldexp(1.0f, static_cast<int>(i / 2 - j / 32)));
  CHECK(compare_exact(cast_back_ref({data, col}, "fp32", {2, 32}), a) == "");
  CHECK(compare_exact(cast_back_ref({data, packed}, "fp32", {2, 32}), a) == "");
}

TEST_CASE("cast_back (128, 1) blocks of the ground-truth cast stay within "
          "the e4m3 bound",
          "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 256, 64, 4, 3.0f);
  for (bool round : {false, true}) {
    QuantTensor q = cast_ref(x, "e4m3", {128, 1}, {}, {}, round);
    CHECK(q.sf.shape() == shape_t{2, 64});
    HostTensor back = cast_back_ref(q, "fp32", {128, 1});
    for (int64_t i = 0; i < 256; ++i)
      for (int64_t j = 0; j < 64; ++j)
        REQUIRE(std::fabs(get(back, i, j) - get(x, i, j)) <=
                error_bound(Fmt::e4m3, get(x, i, j), get(q.sf, i / 128, j)));
  }
}

TEST_CASE("cast_back: M = 0 and argument checks", "[ref][quant]") {
  QuantTensor empty{HostTensor::zeros(DType::i8, {0, 64}),
                    alloc_sf(0, 1, SfLayout::row_major)};
  HostTensor e = cast_back_ref(empty, "fp32", {1, 128});
  CHECK(e.dtype() == DType::f32);
  CHECK(e.shape() == shape_t{0, 128});
  QuantTensor q{HostTensor::zeros(DType::e4m3, {2, 64}),
                HostTensor::zeros(DType::f32, {2, 1})};
  CHECK_THROWS_WITH(cast_back_ref(q, "fp16", {1, 64}),
                    "cast_back_ref: argument 'fmt' is 'fp16'; requires 'bf16' "
                    "or 'fp32'");
  CHECK_THROWS_WITH(cast_back_ref(q, "fp32", {1, 64}, "e4m3"),
                    "cast_back_ref: argument 'x_special_fmt' is 'e4m3'; "
                    "requires None or 'e5m6'");
  CHECK_THROWS_WITH(cast_back_ref(q, "fp32", {1, 0}),
                    "cast_back_ref: argument 'x_block_size' is (1, 0); "
                    "requires positive sizes");
  CHECK_THROWS_WITH(per_token_cast_back_ref(q, "fp32", 0),
                    "per_token_cast_back_ref: argument 'num_per_channels' is "
                    "0; requires a positive group size");
  CHECK_THROWS_WITH(
      cast_back_ref({HostTensor::zeros(DType::e4m3, {2, 32}), q.sf}, "fp32",
                    {1, 32}),
      "cast_back_ref: x.data has logical K = 32; requires K % 64 == 0");
  CHECK_THROWS_WITH(
      cast_back_ref({HostTensor::zeros(DType::f32, {2, 64}), q.sf}, "fp32",
                    {1, 64}),
      "cast_back_ref: argument 'x.data' has dtype f32; requires e4m3 or i8");
  CHECK_THROWS_WITH(
      cast_back_ref(
          {HostTensor::zeros(DType::e4m3, {64, 2}).transposed(0, 1), q.sf},
          "fp32", {1, 64}),
      "cast_back_ref: argument 'x.data' is e4m3[2, 64] strides [1, 2]; "
      "requires a contiguous tensor");
  CHECK_THROWS_WITH(cast_back_ref(q, "fp32", {1, 32}),
                    "cast_back_ref: argument 'x.sf' has shape [2, 1]; "
                    "requires [2, 2]");
}
