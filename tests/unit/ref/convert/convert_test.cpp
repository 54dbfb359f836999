// convert_test.cpp - Hand-computed cases of the exact element conversions
// (shared/specs/quant_transpose.md §2); tests/python/test_convert.py checks
// them against ml_dtypes over all codes and millions of random values.
#include "common/convert.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace tilejit::ref;

TEST_CASE("e4m3 rounds to nearest even and saturates", "[convert]") {
  CHECK(f32_to_e4m3(448.0f) == 0x7E);
  CHECK(f32_to_e4m3(1e6f) == 0x7E);
  CHECK(f32_to_e4m3(-1e6f) == 0xFE);
  CHECK(f32_to_e4m3(INFINITY) == 0x7E);
  CHECK(f32_to_e4m3(std::nanf("")) == 0x7F);
  CHECK(f32_to_e4m3(-1e-30f) == 0x80);
  CHECK(f32_to_e4m3(1.0f) == 0x38);
  // 1.0625 is halfway between 1.0 (0x38) and 1.125 (0x39): ties to even.
  CHECK(f32_to_e4m3(1.0625f) == 0x38);
  CHECK(f32_to_e4m3(1.1875f) == 0x3A);
  // Smallest subnormal 2^-9, and half of it ties to zero.
  CHECK(f32_to_e4m3(std::ldexp(1.0f, -9)) == 0x01);
  CHECK(f32_to_e4m3(std::ldexp(1.0f, -10)) == 0x00);
  CHECK(e4m3_to_f32(0x7E) == 448.0f);
  CHECK(std::isnan(e4m3_to_f32(0xFF)));
  CHECK(e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));
}

TEST_CASE("e2m1 follows the spec's examples", "[convert]") {
  CHECK(f32_to_e2m1(0.25f) == 0);
  CHECK(e2m1_to_f32(f32_to_e2m1(0.75f)) == 1.0f);
  CHECK(e2m1_to_f32(f32_to_e2m1(5.0f)) == 4.0f);
  CHECK(e2m1_to_f32(f32_to_e2m1(2.5f)) == 2.0f);
  CHECK(e2m1_to_f32(f32_to_e2m1(3.5f)) == 4.0f);
  CHECK(f32_to_e2m1(100.0f) == 7);
  CHECK(f32_to_e2m1(-0.0f) == 8);
  CHECK(f32_to_e2m1(-0.1f) == 8);
  const float values[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint8_t c = 0; c < 8; ++c) {
    CHECK(e2m1_to_f32(c) == values[c]);
    CHECK(e2m1_to_f32(c | 8) == -values[c]);
  }
  CHECK(pack_e2m1x2(0x3, 0xA) == 0xA3);
}

TEST_CASE("bf16 and fp16 round to nearest even", "[convert]") {
  CHECK(f32_to_bf16(1.0f) == 0x3F80);
  CHECK(f32_to_bf16(bits_to_f32(0x3F808000)) == 0x3F80); // tie -> even
  CHECK(f32_to_bf16(bits_to_f32(0x3F818000)) == 0x3F82); // tie -> even
  CHECK(f32_to_bf16(bits_to_f32(0x3F808001)) == 0x3F81);
  CHECK(bf16_to_f32(0xC040) == -3.0f);
  CHECK(f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(f32_to_f16(65520.0f) == 0x7C00); // rounds up to inf
  CHECK(f32_to_f16_rz(65520.0f) == 0x7BFF);
  CHECK(f32_to_f16(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(f32_to_f16_rz(std::ldexp(1.0f, -25)) == 0x0000);
  CHECK(f16_to_f32(0x3C00) == 1.0f);
}

TEST_CASE("ue8m0 decodes the exponent byte", "[convert]") {
  CHECK(ue8m0_to_f32(127) == 1.0f);
  CHECK(ue8m0_to_f32(120) == std::ldexp(1.0f, -7));
  CHECK(ue8m0_to_f32(0) == 0.0f);
}

TEST_CASE("e5m6 gives every NaN a positive NaN code, infinities theirs",
          "[convert]") {
  // fp16 0x7E00 (the kernel's min.s16x2 of the H200's 0x7FFF), rounded by
  // the NaN's 17 low bits like any value; the sign does not survive.
  auto from_bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  };
  for (uint32_t nan :
       {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FA10000u})
    CHECK(f32_to_e5m6(from_bits(nan)) == 0x7E0);
  CHECK(f32_to_e5m6(from_bits(0x7FFFFFFFu)) == 0x7E1);
  CHECK(f32_to_e5m6(from_bits(0xFFFFFFFFu)) == 0x7E1);
  CHECK(std::isnan(e5m6_to_f32(0x7E1)));
  CHECK(f32_to_e5m6(INFINITY) == 0x7C0);
  CHECK(f32_to_e5m6(-INFINITY) == 0xFC0);
}

TEST_CASE("e5m6 reproduces the spec's worked vector", "[convert]") {
  const float values[8] = {1.0f,
                           -2.5f,
                           65024.0f,
                           std::ldexp(1.0f, -20),
                           std::ldexp(63.0f / 64.0f, -14),
                           std::ldexp(1.0f, -14),
                           0.1f,
                           -1.0078125f};
  const uint16_t codes[8] = {0x3c0, 0xc10, 0x7bf, 0x001,
                             0x03f, 0x040, 0x2e6, 0xbc0};
  uint16_t got[8];
  for (int i = 0; i < 8; ++i) {
    got[i] = f32_to_e5m6(values[i]);
    CHECK(got[i] == codes[i]);
  }
  uint32_t words[3];
  pack_e5m6(got, words);
  CHECK(words[0] == 0x3c0c107bu);
  CHECK(words[1] == 0xf00103f0u);
  CHECK(words[2] == 0x402e6bc0u);
  uint16_t back[8];
  unpack_e5m6(words, back);
  const float decoded[8] = {1.0f,
                            -2.5f,
                            65024.0f,
                            std::ldexp(1.0f, -20),
                            std::ldexp(63.0f / 64.0f, -14),
                            std::ldexp(1.0f, -14),
                            0.099609375f,
                            -1.0f};
  for (int i = 0; i < 8; ++i) {
    CHECK(back[i] == codes[i]);
    CHECK(e5m6_to_f32(back[i]) == decoded[i]);
  }
}
