// e4m3_sf_test.cpp - TileKernels 2.1's E4M3 scale factors (tk21_ops
// §0.4(a), use_e4m3_sf): the scale of an amax, its clamp and saturation,
// per_token_cast's data and scales with them in both layouts, the
// fake-quantization round trip, and the flags they exclude.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;
using tilejit::ref::e4m3_to_f32;
using tilejit::ref::f32_to_e4m3;

TEST_CASE("E4M3 scale factors: the scale is the e4m3 value of a / fmt_max",
          "[ref][quant]") {
  // 3 / 448 = 0.0067 lies between the e4m3 subnormals 3 x 2^-9 and
  // 4 x 2^-9, nearer the first.
  const SfAndInv s = get_e4m3_sf_and_inv(3.0f, Fmt::e4m3);
  CHECK(s.sf == 3 * 0x1p-9f);
  CHECK(s.sf_inv == 1.0f / (3 * 0x1p-9f));
  CHECK(s.ue8m0 == 0);
  // The clamps: fmt_max x 2^-9, so the smallest scale is 2^-9.
  CHECK(get_e4m3_sf_and_inv(0.0f, Fmt::e4m3).sf == 0x1p-9f);
  CHECK(get_e4m3_sf_and_inv(0.0f, Fmt::e2m1).sf == 0x1p-9f);
  CHECK(get_e4m3_sf_and_inv(0.5f, Fmt::e2m1).sf ==
        e4m3_to_f32(f32_to_e4m3(0.5f / 6.0f)));
  // Past 448 x 448 the scale saturates to 448 (the kernel's cast).
  CHECK(get_e4m3_sf_and_inv(448.0f * 500.0f, Fmt::e4m3).sf == 448.0f);
  // A given clamp replaces the default.
  CHECK(get_e4m3_sf_and_inv(0.0f, Fmt::e4m3, 448.0f).sf == 1.0f);
}

TEST_CASE("E4M3 scale factors: per_token_cast's data and scales, both "
          "layouts",
          "[ref][quant]") {
  const HostTensor x = randn(DType::bf16, 5, 256, 11, 3.0f);
  for (bool col_major : {false, true}) {
    const QuantTensor q =
        per_token_cast_ref(x, "e4m3", 64, {}, col_major, false, false, true);
    REQUIRE(q.sf.dtype() == DType::e4m3);
    REQUIRE(q.sf.shape() == shape_t{5, 4});
    if (col_major) {
      CHECK(q.sf.stride(0) == 1);
      CHECK(q.sf.stride(1) == 16); // align(5, 16)
    } else {
      CHECK(q.sf.stride(1) == 1);
    }
    for (int64_t m = 0; m < 5; ++m)
      for (int64_t g = 0; g < 4; ++g) {
        float amax = 0.0f;
        for (int64_t j = 64 * g; j < 64 * (g + 1); ++j)
          amax = std::max(amax, std::fabs(get(x, m, j)));
        const float sf =
            e4m3_to_f32(f32_to_e4m3(std::max(amax, 0.875f) / 448.0f));
        CHECK(e4m3_to_f32(q.sf.at<uint8_t>({m, g})) == sf);
        for (int64_t j = 64 * g; j < 64 * (g + 1); ++j)
          CHECK(q.data.at<uint8_t>({m, j}) ==
                f32_to_e4m3(get(x, m, j) * (1.0f / sf)));
      }
  }
}

TEST_CASE("E4M3 scale factors: fake quantization dequantizes with the "
          "decoded scale",
          "[ref][quant]") {
  const HostTensor x = randn(DType::f32, 3, 128, 5);
  const HostTensor back =
      per_token_cast_and_cast_back_ref(x, "e4m3", 32, false, true);
  const QuantTensor q =
      per_token_cast_ref(x, "e4m3", 32, {}, false, false, false, true);
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t j = 0; j < 128; ++j)
      CHECK(get(back, m, j) == e4m3_to_f32(q.data.at<uint8_t>({m, j})) *
                                   e4m3_to_f32(q.sf.at<uint8_t>({m, j / 32})));
}

TEST_CASE("E4M3 scale factors exclude rounded and packed scales",
          "[ref][quant][error]") {
  const HostTensor x = randn(DType::f32, 2, 128, 3);
  auto message = [&](auto call) {
    try {
      call();
    } catch (const std::exception &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message([&] {
          per_token_cast_ref(x, "e4m3", 32, {}, false, true, false, true);
        }) == "per_token_cast_ref: argument 'use_e4m3_sf' is true with "
              "round_sf=true, use_packed_ue8m0=false and fmt 'e4m3'; "
              "requires round_sf and use_packed_ue8m0 false and fmt e4m3 "
              "or e2m1 (tk21 0.4)");
  CHECK(message([&] {
          per_token_cast_and_cast_back_ref(x, "e4m3", 32, true, true);
        }) == "per_token_cast_and_cast_back_ref: arguments 'round_sf' and "
              "'use_e4m3_sf' are both true; requires at most one");
}
