// per_channel_cast_test.cpp - per_channel_cast, per_channel_cast_fused and
// per_channel_cast_and_transpose (§10): column amax per 128 (or 32) rows,
// gathering with padding rows, quantized inputs, transposition, checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

TEST_CASE("per_channel_cast: one scale per column per 128 rows",
          "[ref][quant]") {
  std::vector<float> v(256 * 64, 0.0f);
  v[7 * 64 + 0] = 448.0f; // block 0, column 0: sf = 1
  v[0 * 64 + 0] = 1.0f;
  v[130 * 64 + 0] = -3.0f; // block 1, column 0: sf = 3/448
  v[200 * 64 + 5] = 0.5f;  // block 1, column 5
  HostTensor x = bf16(256, 64, v);
  QuantTensor q = per_channel_cast_ref(x, "e4m3", 128);
  REQUIRE(q.data.shape() == shape_t{256, 64});
  REQUIRE(q.sf.shape() == shape_t{2, 64});
  CHECK(q.sf.strides() == shape_t{64, 1});
  CHECK(get(q.sf, 0, 0) == 1.0f);
  CHECK(byte_at(q.data, 0, 0) == 0x38);
  CHECK(byte_at(q.data, 7, 0) == 0x7E);
  CHECK(get(q.sf, 1, 0) == 3.0f / 448.0f);
  CHECK(byte_at(q.data, 130, 0) == 0xFE);
  CHECK(get(q.sf, 0, 5) == 1e-4f / 448.0f); // a zero column block
  CHECK(get(q.sf, 1, 5) == 0.5f / 448.0f);
  QuantTensor r = per_channel_cast_ref(x, "e4m3", 128, true);
  CHECK(get(r.sf, 1, 5) == std::ldexp(1.0f, -9));
  QuantTensor t = cast_ref(x, "e4m3", {128, 1}, {}, {}, true);
  CHECK(compare_exact(r.data, t.data) == "");
  CHECK(compare_exact(r.sf, t.sf) == "");
  QuantTensor e = per_channel_cast_ref(HostTensor::zeros(DType::bf16, {0, 64}),
                                       "e4m3", 128);
  CHECK(e.data.shape() == shape_t{0, 64});
  CHECK(e.sf.shape() == shape_t{0, 64});
}

TEST_CASE("per_channel_cast_fused: plain, gathered and quantized inputs",
          "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 200, 256, 31, 2.0f);
  SECTION("without pos_to_token it is per_channel_cast") {
    HostTensor x128 = randn(DType::bf16, 128, 256, 32);
    QuantTensor a = per_channel_cast_fused_ref(x128, "e4m3", 128, true);
    QuantTensor b = per_channel_cast_ref(x128, "e4m3", 128, true);
    CHECK(compare_exact(a.data, b.data) == "");
    CHECK(compare_exact(a.sf, b.sf) == "");
  }
  SECTION("gathered rows; -1 rows are +0 and count as zeros; a partial "
          "128-row block takes amax over its rows") {
    // R = 144 = 128 + 16: the second block has 16 rows only.
    std::vector<int32_t> pos(144);
    for (int64_t r = 0; r < 144; ++r)
      pos[r] = r % 5 == 4 ? -1 : static_cast<int32_t>((r * 37) % 200);
    const int64_t pshape[] = {144};
    HostTensor p = HostTensor::from(DType::i32, pshape, pos);
    QuantTensor q = per_channel_cast_fused_ref(x, "e4m3", 128, false, {}, p);
    REQUIRE(q.data.shape() == shape_t{144, 256});
    REQUIRE(q.sf.shape() == shape_t{2, 256});
    std::vector<float> g(144 * 256, 0.0f);
    for (int64_t r = 0; r < 144; ++r)
      for (int64_t c = 0; c < 256; ++c)
        if (pos[r] >= 0)
          g[r * 256 + c] = get(x, pos[r], c);
    QuantTensor expected = cast_ref(f32(144, 256, g), "e4m3", {128, 1});
    CHECK(compare_exact(q.data, expected.data) == "");
    CHECK(compare_exact(q.sf, expected.sf) == "");
    for (int64_t c = 0; c < 256; ++c)
      REQUIRE(byte_at(q.data, 4, c) == 0x00); // +0, never -0
    // Block 1's amax is over its 16 rows.
    float amax = 0;
    for (int64_t r = 128; r < 144; ++r)
      amax = std::max(amax, std::fabs(g[r * 256 + 3]));
    CHECK(get(q.sf, 1, 3) == amax / 448.0f);
  }
}

TEST_CASE("per_channel_cast_fused: quantized input, order of products",
          "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 128, 256, 33, 2.0f);
  QuantTensor in = per_token_cast_ref(x, "e4m3", 128); // non-rounded scales
  for (bool round : {false, true}) {
    QuantTensor q = per_channel_cast_fused_ref(in, "e4m3", 128, round, 128);
    // Expected from the spec: v = float(x_fp8) * x_sf, amax per column,
    // out = e4m3(v * sf_inv).
    for (int64_t c = 0; c < 256; ++c) {
      float amax = 0;
      for (int64_t r = 0; r < 128; ++r)
        amax = std::max(amax,
                        std::fabs(get(in.data, r, c) * get(in.sf, r, c / 128)));
      const SfAndInv s = get_sf_and_inv(amax, Fmt::e4m3, round);
      REQUIRE(get(q.sf, 0, c) == s.sf);
      for (int64_t r = 0; r < 128; ++r)
        REQUIRE(byte_at(q.data, r, c) ==
                tilejit::ref::f32_to_e4m3(
                    (get(in.data, r, c) * get(in.sf, r, c / 128)) * s.sf_inv));
    }
  }
  // K == 128: a contiguous (N, 1) sf is accepted (the original would
  // misclassify it as column-major and fail).
  HostTensor x1 = randn(DType::bf16, 128, 128, 34);
  QuantTensor in1 = per_token_cast_ref(x1, "e4m3", 128, {}, false, true);
  REQUIRE(in1.sf.shape() == shape_t{128, 1});
  QuantTensor q1 = per_channel_cast_fused_ref(in1, "e4m3", 128, true, 128);
  QuantTensor e1 = cast_ref(in1, "e4m3", {128, 1}, {}, BlockSize{1, 128}, true);
  CHECK(compare_exact(q1.data, e1.data) == "");
  CHECK(compare_exact(q1.sf, e1.sf) == "");
}

TEST_CASE("per_channel_cast_and_transpose: data (K, M), sf (M / bm, K)",
          "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 128, 192, 35, 3.0f);
  for (int64_t bm : {32, 128})
    for (bool round : {false, true}) {
      QuantTensor q = per_channel_cast_and_transpose_ref(x, "e4m3", bm, round);
      QuantTensor t = cast_ref(x, "e4m3", {bm, 1}, {}, {}, round);
      REQUIRE(q.data.shape() == shape_t{192, 128});
      CHECK(q.data.strides() == shape_t{128, 1});
      CHECK(compare_exact(q.sf, t.sf) == "");
      CHECK(q.sf.shape() == shape_t{128 / bm, 192});
      for (int64_t r = 0; r < 128; ++r)
        for (int64_t c = 0; c < 192; ++c)
          REQUIRE(byte_at(q.data, c, r) == byte_at(t.data, r, c));
    }
  QuantTensor e = per_channel_cast_and_transpose_ref(
      HostTensor::zeros(DType::bf16, {0, 64}), "e4m3", 32);
  CHECK(e.data.shape() == shape_t{64, 0});
  CHECK(e.sf.shape() == shape_t{0, 64});
}

TEST_CASE("per-channel casts: argument checks", "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {128, 64});
  SECTION("per_channel_cast") {
    const std::string fn = "per_channel_cast_ref: ";
    CHECK_THROWS_WITH(per_channel_cast_ref(x, "e2m1", 128),
                      fn + "argument 'fmt' is 'e2m1'; requires 'e4m3'");
    CHECK_THROWS_WITH(per_channel_cast_ref(x, "e4m3", 32),
                      fn + "argument 'num_per_tokens' is 32; requires 128");
    CHECK_THROWS_WITH(
        per_channel_cast_ref(HostTensor::zeros(DType::bf16, {100, 64}), "e4m3",
                             128),
        fn + "argument 'x' has M = 100 rows; requires M % 128 == 0");
    CHECK_THROWS_WITH(
        per_channel_cast_ref(HostTensor::zeros(DType::bf16, {128, 32}), "e4m3",
                             128),
        fn + "argument 'x' has K = 32 columns; requires K % 64 == 0");
    CHECK_THROWS_WITH(per_channel_cast_ref(
                          HostTensor::zeros(DType::i8, {128, 64}), "e4m3", 128),
                      fn + "argument 'x' has dtype i8; requires bf16 or f32");
    CHECK_THROWS_WITH(
        per_channel_cast_ref(
            HostTensor::zeros(DType::bf16, {64, 128}).transposed(0, 1), "e4m3",
            128),
        fn + "argument 'x' is bf16[128, 64] strides [1, 128]; requires a "
             "contiguous tensor");
  }
  SECTION("per_channel_cast_fused") {
    const std::string fn = "per_channel_cast_fused_ref: ";
    const int64_t pshape[] = {20};
    HostTensor p20 =
        HostTensor::from(DType::i32, pshape, std::vector<int32_t>(20, 0));
    CHECK_THROWS_WITH(per_channel_cast_fused_ref(x, "e4m3", 32),
                      fn + "argument 'num_per_tokens' is 32; requires 128");
    CHECK_THROWS_WITH(per_channel_cast_fused_ref(x, "e4m3", 128, false, 128),
                      fn + "argument 'num_per_channels' is 128 for a plain "
                           "tensor x; requires None");
    CHECK_THROWS_WITH(
        per_channel_cast_fused_ref(HostTensor::zeros(DType::bf16, {100, 64}),
                                   "e4m3", 128),
        fn + "x has 100 rows; without pos_to_token requires a multiple of 128");
    CHECK_THROWS_WITH(
        per_channel_cast_fused_ref(x, "e4m3", 128, false, {}, p20),
        fn + "argument 'pos_to_token' has 20 entries; requires "
             "a multiple of 16");
    const int64_t s16[] = {16};
    std::vector<int32_t> bad(16, 0);
    bad[3] = 128;
    CHECK_THROWS_WITH(
        per_channel_cast_fused_ref(x, "e4m3", 128, false, {},
                                   HostTensor::from(DType::i32, s16, bad)),
        fn + "pos_to_token[3] is 128; requires a negative value (padding) or "
             "a row of x (< 128)");
    CHECK_THROWS_WITH(
        per_channel_cast_fused_ref(
            x, "e4m3", 128, false, {},
            HostTensor::from(DType::i64, s16, std::vector<int64_t>(16, 0))),
        fn + "argument 'pos_to_token' has dtype i64; requires i32");
    QuantTensor q{HostTensor::zeros(DType::e4m3, {128, 256}),
                  HostTensor::zeros(DType::f32, {128, 2})};
    CHECK_THROWS_WITH(per_channel_cast_fused_ref(q, "e4m3", 128),
                      fn + "argument 'num_per_channels' is None for a "
                           "QuantTensor x; requires 128");
    CHECK_THROWS_WITH(per_channel_cast_fused_ref(q, "e4m3", 128, false, 64),
                      fn + "argument 'num_per_channels' is 64 for a "
                           "QuantTensor x; requires 128");
    CHECK_THROWS_WITH(
        per_channel_cast_fused_ref(
            QuantTensor{HostTensor::zeros(DType::e4m3, {128, 192}), q.sf},
            "e4m3", 128, false, 128),
        fn + "argument 'x.data' has K = 192 columns; a QuantTensor x requires "
             "K % 128 == 0");
    CHECK_THROWS_WITH(
        per_channel_cast_fused_ref(
            QuantTensor{q.data, HostTensor::zeros(DType::f32, {128, 4})},
            "e4m3", 128, false, 128),
        fn + "argument 'x.sf' has shape [128, 4]; requires [128, 2]");
  }
  SECTION("per_channel_cast_and_transpose") {
    const std::string fn = "per_channel_cast_and_transpose_ref: ";
    CHECK_THROWS_WITH(per_channel_cast_and_transpose_ref(
                          HostTensor::zeros(DType::f32, {128, 64}), "e4m3", 32),
                      fn + "argument 'x' has dtype f32; requires bf16");
    CHECK_THROWS_WITH(per_channel_cast_and_transpose_ref(x, "e4m3", 64),
                      fn + "argument 'num_per_tokens' is 64; requires 32 or "
                           "128");
    CHECK_THROWS_WITH(
        per_channel_cast_and_transpose_ref(
            HostTensor::zeros(DType::bf16, {96, 64}), "e4m3", 32),
        fn + "argument 'x' has M = 96 rows; requires M % 128 == 0");
    CHECK_THROWS_WITH(
        per_channel_cast_and_transpose_ref(
            HostTensor::zeros(DType::bf16, {128, 96}), "e4m3", 32),
        fn + "argument 'x' has K = 96 columns; requires K % 64 == 0");
  }
}
