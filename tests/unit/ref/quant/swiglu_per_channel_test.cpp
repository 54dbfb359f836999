// swiglu_per_channel_test.cpp -
// swiglu_forward_and_per_channel_cast_and_transpose (§11.3): bf16 rounding
// of the activation before the cast, both layouts, clamp, checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

float round_bf16(float v) {
  return tilejit::ref::bf16_to_f32(tilejit::ref::f32_to_bf16(v));
}

/// The spec's activation with the optional float32 clamp, rounded to bf16.
float spec_a(float g, float u, std::optional<float> C) {
  if (C) {
    g = std::min(g, *C);
    u = std::min(std::max(u, -*C), *C);
  }
  const float t = 1.0f + std::exp(-g);
  return round_bf16((g / t) * u);
}

} // namespace

TEST_CASE("swiglu per-channel: the activation is rounded to bf16 before "
          "the cast",
          "[ref][quant]") {
  // Rows 0 and 1 of column 0 (one (32, 1) block): search for activations
  // whose codes differ with and without the bf16 rounding.
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (int trial = 0; trial < 100000; ++trial) {
    const float g0 = round_bf16(dist(rng)), u0 = round_bf16(dist(rng));
    const float g1 = round_bf16(dist(rng)), u1 = round_bf16(dist(rng));
    auto codes = [&](bool rounded) {
      float a0 = spec_a(g0, u0, {}), a1 = spec_a(g1, u1, {});
      if (!rounded) {
        a0 = (g0 / (1.0f + std::exp(-g0))) * u0;
        a1 = (g1 / (1.0f + std::exp(-g1))) * u1;
      }
      const SfAndInv s = get_sf_and_inv(std::max(std::fabs(a0), std::fabs(a1)),
                                        Fmt::e4m3, false);
      return std::pair{tilejit::ref::f32_to_e4m3(a1 * s.sf_inv), s.sf};
    };
    if (codes(true).first == codes(false).first)
      continue;
    std::vector<float> v(128 * 128, 0.0f);
    v[0] = g0, v[64] = u0, v[128] = g1, v[128 + 64] = u1;
    QuantTensor q = swiglu_forward_and_per_channel_cast_and_transpose_ref(
        bf16(128, 128, v), "e4m3", 32);
    CHECK(byte_at(q.data, 0, 1) == codes(true).first); // transposed: (c, r)
    CHECK(get(q.sf, 0, 0) == codes(true).second);
    return;
  }
  FAIL("no discriminating case found");
}

TEST_CASE("swiglu per-channel: both layouts and the clamp against the spec",
          "[ref][quant]") {
  const int64_t M = 128, H = 192;
  HostTensor x = randn(DType::bf16, M, 2 * H, 60, 2.0f);
  for (std::optional<float> C :
       {std::optional<float>{}, std::optional<float>{0.5f},
        std::optional<float>{10.0f}})
    for (int64_t bm : {32, 128})
      for (bool round : {false, true}) {
        std::vector<float> a(M * H);
        for (int64_t r = 0; r < M; ++r)
          for (int64_t c = 0; c < H; ++c)
            a[r * H + c] = spec_a(get(x, r, c), get(x, r, H + c), C);
        QuantTensor e = cast_ref(f32(M, H, a), "e4m3", {bm, 1}, {}, {}, round);
        QuantTensor n = swiglu_forward_and_per_channel_cast_and_transpose_ref(
            x, "e4m3", bm, round, true, C);
        CHECK(compare_exact(n.data, e.data) == "");
        CHECK(compare_exact(n.sf, e.sf) == "");
        QuantTensor t = swiglu_forward_and_per_channel_cast_and_transpose_ref(
            x, "e4m3", bm, round, false, C);
        REQUIRE(t.data.shape() == shape_t{H, M});
        CHECK(t.data.strides() == shape_t{M, 1});
        CHECK(compare_exact(t.sf, e.sf) == "");
        for (int64_t r = 0; r < M; ++r)
          for (int64_t c = 0; c < H; ++c)
            REQUIRE(byte_at(t.data, c, r) == byte_at(e.data, r, c));
      }
}

TEST_CASE("swiglu per-channel: M = 0 and argument checks", "[ref][quant]") {
  QuantTensor e = swiglu_forward_and_per_channel_cast_and_transpose_ref(
      HostTensor::zeros(DType::bf16, {0, 128}), "e4m3", 128);
  CHECK(e.data.shape() == shape_t{64, 0});
  CHECK(e.sf.shape() == shape_t{0, 64});
  const std::string fn =
      "swiglu_forward_and_per_channel_cast_and_transpose_ref: ";
  HostTensor x = HostTensor::zeros(DType::bf16, {128, 128});
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_channel_cast_and_transpose_ref(x, "e2m1", 32),
      fn + "argument 'fmt' is 'e2m1'; requires 'e4m3'");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_channel_cast_and_transpose_ref(x, "e4m3", 64),
      fn + "argument 'num_per_tokens' is 64; requires 32 or 128");
  CHECK_THROWS_WITH(swiglu_forward_and_per_channel_cast_and_transpose_ref(
                        HostTensor::zeros(DType::bf16, {96, 128}), "e4m3", 32),
                    fn + "argument 'x' has M = 96 rows; requires M % 128 == 0");
  CHECK_THROWS_WITH(swiglu_forward_and_per_channel_cast_and_transpose_ref(
                        HostTensor::zeros(DType::bf16, {128, 192}), "e4m3", 32),
                    fn + "argument 'x' has 2H = 192 columns; requires "
                         "2H % 128 == 0");
  CHECK_THROWS_WITH(swiglu_forward_and_per_channel_cast_and_transpose_ref(
                        HostTensor::zeros(DType::f32, {128, 128}), "e4m3", 32),
                    fn + "argument 'x' has dtype f32; requires bf16");
}
