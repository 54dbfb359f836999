// round_sf_21_test.cpp - TileKernels 2.1's round_sf computes sf as
// a x fl32(1 / fmt_max) where 1.0 divided (tk21_ops §0.4(b)). The power of
// two it rounds to - all that round_sf keeps - is the same for every amax
// with e4m3's and e2m1's fmt_max, so one implementation is bit-exact for
// both releases and no numerics parameter is needed. (Checked exhaustively
// over all 2^31 - 2^23 positive normal f32 amax on 2026-12-03; sampled here,
// with every neighbourhood of a power-of-two boundary.) E5M6's 65024, which
// 2.1 dropped, is where the two differ: the check can tell them apart.
#include "test_util.h"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>

using namespace quant_test;

namespace {

/// The biased exponent of the power of two at or above sf (§3.2's trick).
uint32_t bin(float sf) {
  return ((std::bit_cast<uint32_t>(sf) - 1u) >> 23) + 1u;
}

/// 2.1's bin of amax a: a x fl32(1 / fmt_max).
uint32_t bin21(float a, float fmt_max) {
  const float reciprocal = 1.0f / fmt_max;
  return bin(a * reciprocal);
}

} // namespace

TEST_CASE("2.1's round_sf by a reciprocal multiply bins every amax as 1.0's "
          "division for e4m3 and e2m1",
          "[ref][quant]") {
  for (auto [fmt, fmt_max] :
       {std::pair<Fmt, float>{Fmt::e4m3, 448.0f}, {Fmt::e2m1, 6.0f}}) {
    INFO("fmt_max " << fmt_max);
    auto same = [&](float a) {
      const SfAndInv s = get_sf_and_inv(a, fmt, true);
      return s.ue8m0 ==
             bin21(
                 std::max(a, fmt == Fmt::e4m3 ? 1e-4f : std::ldexp(6.0f, -126)),
                 fmt_max);
    };
    // Every 4099th positive normal f32.
    for (uint32_t u = 0x00800000u; u < 0x7f000000u; u += 4099)
      REQUIRE(same(std::bit_cast<float>(u)));
    // Around each a = fmt_max x 2^k (sf at a power of two), 8 ulps each way.
    for (int k = -120; k < 100; ++k) {
      const uint32_t at = std::bit_cast<uint32_t>(std::ldexp(fmt_max, k));
      for (uint32_t d = 0; d <= 8; ++d) {
        REQUIRE(same(std::bit_cast<float>(at + d)));
        REQUIRE(same(std::bit_cast<float>(at - d)));
      }
    }
  }
  // 65024 (E5M6): a just above 65024 x 2^-14 divides to just above 2^-30
  // (bin up) but multiplies to 2^-30 exactly.
  const float a = 0x1.fc0002p-14f;
  CHECK(bin(a / 65024.0f) == bin21(a, 65024.0f) + 1);
}
