// per_token_cast_and_cast_back_test.cpp - TileKernels 2.1's
// per_token_cast_and_cast_back (tk21_ops §3.3): the round trip recomputed
// group by group, both formats, both dtypes, round_sf, and the checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

TEST_CASE("per_token_cast_and_cast_back (2.1): the round trip, element by "
          "element",
          "[ref][quant]") {
  // Each group's values come back as float(code) x sf in x's dtype: check
  // against a direct computation of one group's scale and codes.
  for (DType dtype : {DType::bf16, DType::f32})
    for (const char *fmt : {"e4m3", "e2m1"})
      for (bool round_sf : {false, true}) {
        const HostTensor x = randn(dtype, 3, 128, 7, 3.0f);
        const HostTensor y =
            per_token_cast_and_cast_back_ref(x, fmt, 32, round_sf);
        REQUIRE(y.dtype() == dtype);
        REQUIRE(y.shape() == shape_t{3, 128});
        const Fmt f = std::string_view(fmt) == "e4m3" ? Fmt::e4m3 : Fmt::e2m1;
        for (int64_t m = 0; m < 3; ++m)
          for (int64_t g = 0; g < 4; ++g) {
            float amax = 0;
            for (int64_t j = 32 * g; j < 32 * g + 32; ++j)
              amax = std::max(amax, std::fabs(get(x, m, j)));
            const SfAndInv s = get_sf_and_inv(amax, f, round_sf);
            for (int64_t j = 32 * g; j < 32 * g + 32; ++j) {
              const float v = get(x, m, j) * s.sf_inv;
              const float code =
                  f == Fmt::e4m3
                      ? tilejit::ref::e4m3_to_f32(tilejit::ref::f32_to_e4m3(v))
                      : tilejit::ref::e2m1_to_f32(tilejit::ref::f32_to_e2m1(v));
              float back = code * s.sf;
              if (dtype == DType::bf16)
                back =
                    tilejit::ref::bf16_to_f32(tilejit::ref::f32_to_bf16(back));
              INFO(fmt << " round_sf " << round_sf << " at " << m << ", " << j);
              CHECK(bits(get(y, m, j)) == bits(back));
            }
          }
      }
  CHECK_THROWS_WITH(
      per_token_cast_and_cast_back_ref(HostTensor::zeros(DType::f32, {2, 128}),
                                       "e4m3", 48),
      "per_token_cast_and_cast_back_ref: argument 'num_per_channels' is 48; "
      "requires 16, 32, 64 or 128");
  CHECK_THROWS_WITH(
      per_token_cast_and_cast_back_ref(HostTensor::zeros(DType::f32, {2, 96}),
                                       "e4m3", 32),
      "per_token_cast_and_cast_back_ref: argument 'x' has K = 96; requires "
      "K % 64 == 0");
}
