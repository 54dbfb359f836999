// stochastic_cast_test.cpp - TileKernels 2.1's stochastic rounding as the
// reference computes it (tk21_ops §2.2): the random words against an
// independent computation, every result one of the two neighbours of the
// value, and rounding unbiased in expectation.
#include "test_util.h"

#include <catch2/catch.hpp>

#include <bit>

using namespace quant_test;
using tilejit::ref::bf16_to_f32;
using tilejit::ref::e4m3_to_f32;

TEST_CASE("stochastic rounding: the quad's random words are the specified "
          "hash",
          "[ref][quant]") {
  // Computed independently (Python, uint32 arithmetic) from the spec's
  // formula for v = (1, -2.5, 0.1, 3), quad 7.
  const float v[4] = {1.0f, -2.5f, 0.1f, 3.0f};
  const StochasticWords w = stochastic_words(v, 7);
  CHECK(w.r0 == 0x52856a0eu);
  CHECK(w.r1 == 0xc56c01b8u);
  CHECK(stochastic_bits(w, 0) == 0x6a0e);
  CHECK(stochastic_bits(w, 1) == 0x5285);
  CHECK(stochastic_bits(w, 2) == 0x01b8);
  CHECK(stochastic_bits(w, 3) == 0xc56c);
  // The quad index and every value change the words.
  CHECK(stochastic_words(v, 8).r0 != w.r0);
  const float other[4] = {1.0f, -2.5f, 0.1f, std::nextafter(3.0f, 4.0f)};
  CHECK(stochastic_words(other, 7).r0 != w.r0);
}

TEST_CASE("stochastic rounding: a result is one of the value's two "
          "neighbours, and exact values stay",
          "[ref][quant]") {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 30.0f);
  std::uniform_int_distribution<int> bits(0, 0xffff);
  for (int i = 0; i < 20000; ++i) {
    float v = normal(gen) * (i % 3 == 0 ? 1e-4f : 1.0f);
    const auto r = static_cast<uint16_t>(bits(gen));
    // bf16: the value truncated, or one step away from zero.
    const float b = bf16_to_f32(stochastic_bf16(v, r));
    const float down =
        bf16_to_f32(static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16));
    const float up = bf16_to_f32(
        static_cast<uint16_t>((std::bit_cast<uint32_t>(v) >> 16) + 1));
    CHECK((b == down || b == up));
    // e4m3: the largest code at or below |v| or the smallest at or above
    // (by a scan of every code), 448 past it; the sign kept.
    const float e = e4m3_to_f32(stochastic_e4m3(v, r));
    const float a = std::fabs(v);
    float below = 0.0f, above = 448.0f;
    for (int c = 0; c <= 0x7e; ++c) {
      const float x = e4m3_to_f32(static_cast<uint8_t>(c));
      if (x <= a)
        below = std::max(below, x);
      if (x >= a)
        above = std::min(above, x);
    }
    CHECK((std::fabs(e) == std::min(below, 448.0f) || std::fabs(e) == above));
    CHECK(std::signbit(e) == std::signbit(v));
  }
  // Representable values never move, whatever the bits.
  for (uint16_t r : {uint16_t{0}, uint16_t{0x7fff}, uint16_t{0xffff}}) {
    CHECK(stochastic_e4m3(1.5f, r) == tilejit::ref::f32_to_e4m3(1.5f));
    CHECK(stochastic_e4m3(-0x1p-9f, r) == 0x81);
    CHECK(stochastic_bf16(1.5f, r) == tilejit::ref::f32_to_bf16(1.5f));
  }
  CHECK(stochastic_e4m3(1000.0f, 0) == 0x7e);
  CHECK(stochastic_e4m3(-1000.0f, 0) == 0xfe);
}

TEST_CASE("stochastic rounding is unbiased: the mean of many roundings is "
          "the value",
          "[ref][quant]") {
  // Each value rounded with every 16-bit word r: the mean is the value to
  // the 2^-16 granularity of the fraction (exact up to that truncation).
  for (float v : {1.3f, -0.0137f, 300.7f, 0x1p-8f * 1.37f, 2.0e-3f}) {
    double sum_e4m3 = 0, sum_bf16 = 0;
    for (uint32_t r = 0; r < 65536; ++r) {
      sum_e4m3 += e4m3_to_f32(stochastic_e4m3(v, static_cast<uint16_t>(r)));
      sum_bf16 += bf16_to_f32(stochastic_bf16(v, static_cast<uint16_t>(r)));
    }
    const double mean_e4m3 = sum_e4m3 / 65536, mean_bf16 = sum_bf16 / 65536;
    INFO("v = " << v);
    // The e4m3 step at v is at most |v| / 8 (2^-9 among subnormals).
    const double step = std::max(std::fabs(v) / 8.0, 0x1p-9);
    CHECK(std::fabs(mean_e4m3 - v) <= step * 0x1p-16 * 2);
    CHECK(std::fabs(mean_bf16 - v) <= std::fabs(v) * 0x1p-7 * 0x1p-16 * 2);
  }
  // Over the hash's own bits (quads of one repeated value, many indices):
  // the fraction of roundings up matches the discarded fraction.
  const float v = 1.3f; // e4m3 neighbours 1.25 and 1.375: 40 % up
  const HostTensor x = f32(1, 40000, std::vector<float>(40000, v));
  const HostTensor y = stochastic_cast_ref(x, DType::e4m3);
  int64_t up = 0;
  for (int64_t i = 0; i < 40000; ++i) {
    const float e = e4m3_to_f32(y.data<uint8_t>()[i]);
    REQUIRE((e == 1.25f || e == 1.375f));
    up += e == 1.375f;
  }
  const double p = (v - 1.25) / 0.125; // 0.4
  // Binomial: 5 standard deviations of 40000 draws.
  CHECK(std::fabs(up / 40000.0 - p) <= 5 * std::sqrt(p * (1 - p) / 40000));
}

TEST_CASE("stochastic_cast_ref refuses other dtype pairs and partial quads",
          "[ref][quant][error]") {
  auto message = [](const HostTensor &x, DType to) {
    try {
      stochastic_cast_ref(x, to);
    } catch (const std::exception &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(f32(1, 4, {1, 2, 3, 4}), DType::f32) ==
        "stochastic_cast_ref: argument 'x' has dtype f32 to f32; stochastic "
        "rounding requires f32 to bf16, f32 to e4m3 or bf16 to e4m3");
  CHECK(message(f32(1, 6, {1, 2, 3, 4, 5, 6}), DType::bf16) ==
        "stochastic_cast_ref: argument 'x' has 6 elements; stochastic "
        "rounding requires a multiple of 4");
}
