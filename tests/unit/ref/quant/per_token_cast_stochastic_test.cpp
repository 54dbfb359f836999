// per_token_cast_stochastic_test.cpp - TileKernels 2.1's per_token_cast
// with stochastic_cast (tk21_ops §3.2) as the reference computes it: codes
// from the scaled values' quads with the column quad index (the row not
// mixed in), every code one of its value's two neighbours, the rounding
// unbiased, scales the deterministic ones, e2m1's rounding step, mistakes.
#include "test_util.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace quant_test;
using tilejit::ref::e2m1_to_f32;
using tilejit::ref::e4m3_to_f32;

namespace {

/// The e2m1 code of element j of row i of packed fp4 data.
uint8_t e2m1_at(const HostTensor &d, int64_t i, int64_t j) {
  const uint8_t b = d.at<uint8_t>({i, j / 2});
  return j % 2 == 0 ? b & 0xF : b >> 4;
}

} // namespace

TEST_CASE("stochastic e2m1: a code is one of the value's two neighbours",
          "[ref][quant]") {
  const float grid[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (float v : {0.2f, 0.75f, 1.25f, 1.9f, 2.5f, 3.99f, 5.0f, -2.5f}) {
    const float a = std::fabs(v);
    float below = 0, above = 6;
    for (float g : grid) {
      if (g <= a)
        below = g;
      if (g >= a && above == 6)
        above = std::min(above, g);
    }
    bool low = false, high = false;
    for (int r = 0; r < 0x10000; r += 97) {
      const float got = e2m1_to_f32(stochastic_e2m1(v, uint16_t(r)));
      INFO("v " << v << " r " << r);
      REQUIRE(
          (got == std::copysign(below, v) || got == std::copysign(above, v)));
      low |= std::fabs(got) == below;
      high |= std::fabs(got) == above;
    }
    CHECK((low && high));
  }
  // On the grid it stays; past 6 and NaN give +-6.
  CHECK(stochastic_e2m1(3.0f, 0) == 0x5);
  CHECK(stochastic_e2m1(3.0f, 0xffff) == 0x5);
  CHECK(stochastic_e2m1(-7.0f, 0) == 0xF);
  CHECK(stochastic_e2m1(NAN, 0) == 0x7);
}

TEST_CASE("per_token_cast stochastic_cast: codes from the scaled quads and "
          "the column quad index",
          "[ref][quant]") {
  HostTensor x = randn(DType::f32, 5, 256, 11, 3.0f);
  // Rows 3 and 4 equal rows 0 and 1: the row is not mixed into the bits.
  for (int64_t j = 0; j < 256; ++j) {
    x.at<float>({3, j}) = x.at<float>({0, j});
    x.at<float>({4, j}) = x.at<float>({1, j});
  }
  for (const char *fmt : {"e4m3", "e2m1"}) {
    INFO(fmt);
    const bool e4m3 = std::string(fmt) == "e4m3";
    const QuantTensor q =
        per_token_cast_ref(x, fmt, 32, {}, false, false, false, false, true);
    const QuantTensor plain = per_token_cast_ref(x, fmt, 32);
    CHECK(compare_exact(q.sf, plain.sf) == ""); // deterministic scales
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 256; j += 4) {
        // sf_inv is fmt_max / amax (not 1 / sf), from the formula.
        const float amax_inv = [&] {
          float amax = 0;
          for (int64_t c = j / 32 * 32; c < j / 32 * 32 + 32; ++c)
            amax = std::max(amax, std::fabs(get(x, i, c)));
          return (e4m3 ? 448.0f : 6.0f) /
                 std::max(amax, e4m3 ? 1e-4f : std::ldexp(6.0f, -126));
        }();
        float v[4];
        for (int e = 0; e < 4; ++e)
          v[e] = get(x, i, j + e) * amax_inv;
        const StochasticWords w =
            stochastic_words(v, static_cast<uint32_t>(j / 4));
        for (int e = 0; e < 4; ++e) {
          const uint16_t r = stochastic_bits(w, e);
          const uint8_t want =
              e4m3 ? stochastic_e4m3(v[e], r) : stochastic_e2m1(v[e], r);
          const uint8_t got =
              e4m3 ? byte_at(q.data, i, j + e) : e2m1_at(q.data, i, j + e);
          REQUIRE(got == want);
        }
      }
    for (int64_t j = 0; j < 256; ++j) {
      const uint8_t a = e4m3 ? byte_at(q.data, 0, j) : e2m1_at(q.data, 0, j);
      const uint8_t b = e4m3 ? byte_at(q.data, 3, j) : e2m1_at(q.data, 3, j);
      REQUIRE(a == b);
    }
  }
}

TEST_CASE("per_token_cast stochastic_cast is unbiased", "[ref][quant]") {
  // One row: a 6 (so that sf = 1 for e2m1) and 4095 values of 1.3, between
  // the codes 1 and 1.5; every quad has its own index, so its own bits.
  HostTensor x = HostTensor::zeros(DType::f32, {1, 4096});
  for (int64_t j = 0; j < 4096; ++j)
    x.at<float>({0, j}) = j == 0 ? 6.0f : 1.3f;
  const QuantTensor q =
      per_token_cast_ref(x, "e2m1", 4096, {}, false, false, false, false, true);
  double sum = 0;
  int up = 0;
  for (int64_t j = 1; j < 4096; ++j) {
    const float v = e2m1_to_f32(e2m1_at(q.data, 0, j));
    REQUIRE((v == 1.0f || v == 1.5f));
    sum += v;
    up += v == 1.5f;
  }
  // P(1.5) = 0.6: mean 1.3, standard error 0.5 x sqrt(0.24 / 4095) = 0.0038.
  CHECK(std::fabs(sum / 4095 - 1.3) < 0.02);
  CHECK(up > 2200);
  CHECK(up < 2700);
}

TEST_CASE("per_token_cast stochastic_cast refuses e5m6 and partial quads",
          "[ref][quant]") {
  const std::string fn = "per_token_cast_ref: ";
  CHECK_THROWS_WITH(
      per_token_cast_ref(randn(DType::f32, 2, 64, 1), "e5m6", 64, {}, false,
                         false, false, false, true),
      fn + "argument 'stochastic_cast' is true with fmt 'e5m6'; requires fmt "
           "e4m3 or e2m1");
  CHECK_THROWS_WITH(
      per_token_cast_ref(randn(DType::f32, 2, 66, 1), "e4m3", 16, {}, false,
                         false, false, false, true),
      fn + "argument 'stochastic_cast' is true with K = 66 and "
           "num_per_channels = 16; requires both multiples of 4 (quads)");
}
