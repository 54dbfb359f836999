// e5m6_test.cpp - per_token_cast(x, 'e5m6', K) and its cast_back (§5, §7):
// the worked vector, the special inputs, the rounding quirk, the bound.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

/// The spec's worked vector (§2.4).
const std::vector<float> kWorked = {1.0f,
                                    -2.5f,
                                    65024.0f,
                                    std::ldexp(1.0f, -20),
                                    std::ldexp(63.0f / 64.0f, -14),
                                    std::ldexp(1.0f, -14),
                                    0.1f,
                                    -1.0078125f};

} // namespace

TEST_CASE("e5m6: the worked vector packs to the documented bytes",
          "[ref][quant]") {
  // amax 65024 gives sf = 1 and sf_inv = 1 (rounded or not).
  for (bool round : {false, true}) {
    QuantTensor q =
        per_token_cast_ref(f32(1, 8, kWorked), "e5m6", 8, {}, false, round);
    REQUIRE(q.data.dtype() == DType::u8);
    REQUIRE(q.data.shape() == shape_t{1, 12});
    const uint8_t expected[12] = {0x7b, 0x10, 0x0c, 0x3c, 0xf0, 0x03,
                                  0x01, 0xf0, 0xc0, 0x6b, 0x2e, 0x40};
    for (int64_t b = 0; b < 12; ++b)
      CHECK(byte_at(q.data, 0, b) == expected[b]);
    CHECK(get(q.sf, 0, 0) == 1.0f);
    HostTensor back = per_token_cast_back_ref(q, "fp32", 8, "e5m6");
    const float decoded[8] = {1.0f,
                              -2.5f,
                              65024.0f,
                              std::ldexp(1.0f, -20),
                              std::ldexp(63.0f / 64.0f, -14),
                              std::ldexp(1.0f, -14),
                              0.099609375f,
                              -1.0f};
    for (int64_t j = 0; j < 8; ++j)
      CHECK(get(back, 0, j) == decoded[j]);
  }
  QuantTensor p =
      per_token_cast_ref(f32(1, 8, kWorked), "e5m6", 8, {}, true, true, true);
  CHECK(p.sf.dtype() == DType::i32);
  CHECK(p.sf.shape() == shape_t{1, 1});
  CHECK(p.sf.strides() == shape_t{1, 4});
  CHECK(p.sf.at<int32_t>({0, 0}) == 127); // only byte 0 is meaningful
}

TEST_CASE("e5m6: the special inputs survive exactly", "[ref][quant]") {
  // generate_e5m6_inputs: constant rows of 2^-20, 2^-14 * 63/64 and 2^-14
  // with the last column 65024, so sf = 1.
  const int64_t K = 64;
  const float specials[3] = {std::ldexp(1.0f, -20),
                             std::ldexp(63.0f / 64.0f, -14),
                             std::ldexp(1.0f, -14)};
  std::vector<float> v;
  for (float s : specials) {
    for (int64_t j = 0; j < K - 1; ++j)
      v.push_back(s);
    v.push_back(65024.0f);
  }
  for (DType dtype : {DType::f32, DType::bf16}) {
    HostTensor x = dtype == DType::f32 ? f32(3, K, v) : bf16(3, K, v);
    for (bool packed : {false, true}) {
      QuantTensor q =
          per_token_cast_ref(x, "e5m6", K, {}, packed, true, packed);
      for (const char *out : {"fp32", "bf16"}) {
        HostTensor back = per_token_cast_back_ref(q, out, K, "e5m6");
        CHECK(back.dtype() ==
              (std::string(out) == "fp32" ? DType::f32 : DType::bf16));
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < K; ++j)
            REQUIRE(get(back, i, j) == get(x, i, j));
        CHECK(tilejit::ref::calc_diff(x, back) < 5e-6);
      }
    }
  }
}

TEST_CASE("e5m6: the rounding quirk for fp16-subnormal magnitudes",
          "[ref][quant]") {
  // With sf = 1 (amax 65024) the codes are those of the values themselves.
  const float q = std::ldexp(1.0f, -20); // the subnormal quantum
  std::vector<float> v = {65024.0f,
                          1.5f * q,  // textbook RNE: 2q (tie to even); quirk: q
                          1.75f * q, // textbook: 2q; quirk: q
                          q * (1.0f + std::ldexp(1.0f, -7)), // textbook: q;
                                                             // quirk: 2q
                          1.0234375f,  // normal tie -> even: 1 + 2/64
                          -1.0078125f, // normal tie -> even: -1
                          0.0f, -0.0f};
  QuantTensor r = per_token_cast_ref(f32(1, 8, v), "e5m6", 8);
  HostTensor back = per_token_cast_back_ref(r, "fp32", 8, "e5m6");
  CHECK(get(back, 0, 1) == q);
  CHECK(get(back, 0, 2) == q);
  CHECK(get(back, 0, 3) == 2 * q);
  CHECK(get(back, 0, 4) == 1.03125f);
  CHECK(get(back, 0, 5) == -1.0f);
  CHECK(get(back, 0, 6) == 0.0f);
  CHECK(std::signbit(get(back, 0, 7)));
}

TEST_CASE("e5m6: cast then cast_back within 2^-7 relative (one 2^-20 sf "
          "quantum below the fp16 normals)",
          "[ref][quant]") {
  for (DType dtype : {DType::f32, DType::bf16}) {
    HostTensor x = randn(dtype, 6, 576, 9, 100.0f);
    for (bool round : {false, true}) {
      QuantTensor q = per_token_cast_ref(x, "e5m6", 576, {}, false, round);
      CHECK(q.data.shape() == shape_t{6, 864});
      HostTensor back = cast_back_ref(q, "fp32", {1, 576}, "e5m6");
      for (int64_t i = 0; i < 6; ++i) {
        const double sf = read_sf(q.sf, i, 0);
        for (int64_t j = 0; j < 576; ++j)
          REQUIRE(std::fabs(get(back, i, j) - get(x, i, j)) <=
                  error_bound(Fmt::e5m6, get(x, i, j), sf));
      }
      CHECK(tilejit::ref::calc_diff(x, back) < 1e-4);
    }
  }
}

TEST_CASE("e5m6 cast_back with a block scale", "[ref][quant]") {
  // Two rows, 16 columns, blocks (1, 8): each code block has its own sf.
  QuantTensor q = per_token_cast_ref(
      f32(2, 16, std::vector<float>(32, 65024.0f)), "e5m6", 16);
  QuantTensor scaled{q.data, f32(2, 2, {1.0f, 2.0f, 0.5f, 3.0f})};
  HostTensor back = cast_back_ref(scaled, "fp32", {1, 8}, "e5m6");
  CHECK(get(back, 0, 0) == 65024.0f);
  CHECK(get(back, 0, 8) == 130048.0f);
  CHECK(get(back, 1, 7) == 32512.0f);
  CHECK(get(back, 1, 15) == 195072.0f);
}

TEST_CASE("e5m6: argument checks", "[ref][quant]") {
  HostTensor x = HostTensor::zeros(DType::f32, {2, 64});
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e5m6", 32),
                    "per_token_cast_to_e5m6_ref: argument 'num_per_channels' "
                    "is 32; requires K = 64 (one scale per row)");
  CHECK_THROWS_WITH(
      per_token_cast_ref(HostTensor::zeros(DType::f32, {2, 12}), "e5m6", 12),
      "per_token_cast_to_e5m6_ref: x has K = 12 columns; requires "
      "K % 8 == 0");
  CHECK_THROWS_WITH(
      per_token_cast_to_e5m6_ref(HostTensor::zeros(DType::e4m3, {2, 64}), 64),
      "per_token_cast_to_e5m6_ref: argument 'x' has dtype e4m3; "
      "requires bf16 or f32");
  CHECK_THROWS_WITH(per_token_cast_ref(x, "e5m6", 64, {}, false, false, true),
                    "per_token_cast_to_e5m6_ref: argument 'use_packed_ue8m0' "
                    "is true with use_tma_aligned_col_major_sf=false and "
                    "round_sf=false; requires both to be true");
  QuantTensor q = per_token_cast_ref(x, "e5m6", 64);
  CHECK_THROWS_WITH(
      cast_back_ref(QuantTensor{HostTensor::zeros(DType::u8, {2, 18}), q.sf},
                    "fp32", {1, 12}, "e5m6"),
      "cast_back_ref: x.data has 18 byte columns; 'e5m6' requires a multiple "
      "of 12 (K = columns * 2 / 3 with K % 8 == 0)");
  CHECK_THROWS_WITH(
      cast_back_ref(QuantTensor{HostTensor::zeros(DType::e4m3, {2, 96}), q.sf},
                    "fp32", {1, 64}, "e5m6"),
      "cast_back_ref: argument 'x.data' has dtype e4m3; "
      "requires u8");
  CHECK_THROWS_WITH(cast_back_ref(q, "fp32", {1, 32}, "e5m6"),
                    "cast_back_ref: argument 'x.sf' has shape [2, 1]; "
                    "requires [2, 2]");
  // M = 0.
  QuantTensor empty =
      per_token_cast_ref(HostTensor::zeros(DType::bf16, {0, 64}), "e5m6", 64);
  HostTensor back = cast_back_ref(empty, "bf16", {1, 64}, "e5m6");
  CHECK(back.dtype() == DType::bf16);
  CHECK(back.shape() == shape_t{0, 64});
}
