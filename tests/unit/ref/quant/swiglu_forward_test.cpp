// swiglu_forward_test.cpp - swiglu_forward_and_per_token_cast (§11.1):
// operation order, clamp and its counters, weights, masked rows, layouts
// and argument checks.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <functional>

using namespace quant_test;

namespace {

/// The spec's activation: t = 1 + expf(-g); (g / t) * u.
float spec_act(float g, float u) {
  const float t = 1.0f + std::exp(-g);
  return (g / t) * u;
}

float round_bf16(float v) {
  return tilejit::ref::bf16_to_f32(tilejit::ref::f32_to_bf16(v));
}

/// x (rows, 2H) bf16 with gate g[r][c] and up u[r][c] given by a function.
HostTensor
gate_up(int64_t rows, int64_t H,
        const std::function<std::pair<float, float>(int64_t, int64_t)> &f) {
  std::vector<float> v(static_cast<size_t>(rows * 2 * H), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < H; ++c) {
      auto [g, u] = f(r, c);
      v[r * 2 * H + c] = g;
      v[r * 2 * H + H + c] = u;
    }
  return bf16(rows, 2 * H, v);
}

struct Case {
  float g, u, clamp_min, sf_inv;
};

/// Searches bf16 (g, u) pairs and a clamp-min (which fixes sf_inv) for which
/// quantizing spec_act gives another e4m3 code than quantizing `alt`.
Case find_discriminating_case(const std::function<float(float, float)> &alt) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int trial = 0; trial < 4000000; ++trial) {
    const float g = round_bf16(dist(rng)), u = round_bf16(dist(rng));
    const float vs = spec_act(g, u), va = alt(g, u);
    if (vs == va || vs == 0.0f)
      continue;
    const float mid = (std::fabs(vs) + std::fabs(va)) / 2;
    for (float m : {232.0f, 9.5f, 104.0f, 0.59375f}) { // e4m3 midpoints
      const float clamp_min = 448.0f * mid / m;
      const float sf_inv = 448.0f / clamp_min;
      if (tilejit::ref::f32_to_e4m3(vs * sf_inv) !=
          tilejit::ref::f32_to_e4m3(va * sf_inv))
        return {g, u, clamp_min, sf_inv};
    }
  }
  FAIL("no discriminating case found");
  return {};
}

} // namespace

TEST_CASE("swiglu forward: the activation is (g / (1 + expf(-g))) * u in "
          "float32, quantized without bf16 rounding",
          "[ref][quant]") {
  const std::pair<const char *, std::function<float(float, float)>> alts[] = {
      {"(g * u) / t",
       [](float g, float u) { return (g * u) / (1.0f + std::exp(-g)); }},
      {"g * (u / t)",
       [](float g, float u) { return g * (u / (1.0f + std::exp(-g))); }},
      {"(g * (1 / t)) * u",
       [](float g, float u) {
         return (g * (1.0f / (1.0f + std::exp(-g)))) * u;
       }},
      {"bf16 activation",
       [](float g, float u) { return round_bf16(spec_act(g, u)); }}};
  for (const auto &[name, alt] : alts) {
    INFO(name);
    const Case k = find_discriminating_case(alt);
    // One row, H = 128: the case at column 0, the rest zero; the clamp-min
    // (above |act|) fixes sf = clamp_min / 448.
    HostTensor x = gate_up(1, 128, [&](int64_t, int64_t c) {
      return c == 0 ? std::pair{k.g, k.u} : std::pair{0.0f, 0.0f};
    });
    QuantTensor q = swiglu_forward_and_per_token_cast_ref(
        x, "e4m3", 128, {}, {}, {}, false, false, false, {}, {}, k.clamp_min);
    CHECK(get(q.sf, 0, 0) == k.clamp_min / 448.0f);
    CHECK(byte_at(q.data, 0, 0) ==
          tilejit::ref::f32_to_e4m3(spec_act(k.g, k.u) * k.sf_inv));
    CHECK(byte_at(q.data, 0, 0) !=
          tilejit::ref::f32_to_e4m3(alt(k.g, k.u) * k.sf_inv));
  }
}

TEST_CASE("swiglu forward: full rows against the spec's formula",
          "[ref][quant]") {
  const int64_t E = 6, H = 256;
  HostTensor x = randn(DType::bf16, E, 2 * H, 40, 2.0f);
  for (int64_t bk : {128, 256})
    for (bool round : {false, true}) {
      QuantTensor q = swiglu_forward_and_per_token_cast_ref(
          x, "e4m3", bk, {}, {}, {}, false, round);
      std::vector<float> act(E * H);
      for (int64_t r = 0; r < E; ++r)
        for (int64_t c = 0; c < H; ++c)
          act[r * H + c] = spec_act(get(x, r, c), get(x, r, H + c));
      QuantTensor e = cast_ref(f32(E, H, act), "e4m3", {1, bk}, {}, {}, round);
      CHECK(compare_exact(q.data, e.data) == "");
      CHECK(compare_exact(q.sf, e.sf) == "");
    }
}

TEST_CASE("swiglu forward: clamp, counters, weights and masked rows",
          "[ref][quant]") {
  const int64_t E = 4, H = 128;
  // Row 0: g in {3, -3, 0.5, 1}, u in {2, -2, 0.5, -0.5} cycling.
  // Row 1: masked by pos_to_expert (not counted, zero output).
  // Row 2: weight index -1 (weight 0). Row 3: weight 2.
  const float gs[4] = {3.0f, -3.0f, 0.5f, 1.0f};
  const float us[4] = {2.0f, -2.0f, 0.5f, -0.5f};
  HostTensor x = gate_up(E, H, [&](int64_t r, int64_t c) {
    if (r == 1)
      return std::pair{100.0f, 100.0f};
    return std::pair{gs[c % 4], us[(c / 4) % 4]};
  });
  const int64_t s4[] = {4}, s3[] = {3};
  HostTensor pos_to_expert =
      HostTensor::from(DType::i32, s4, std::vector<int32_t>{0, -1, 1, 2});
  HostTensor pos_to_token_topk =
      HostTensor::from(DType::i32, s4, std::vector<int32_t>{0, 1, -1, 3});
  HostTensor weights = f32(2, 2, {1.0f, 5.0f, 7.0f, 2.0f});
  HostTensor count =
      HostTensor::from(DType::i64, s3, std::vector<int64_t>{10, 20, 30});
  QuantTensor q = swiglu_forward_and_per_token_cast_ref(
      x, "e4m3", 128, pos_to_token_topk, weights, pos_to_expert, false, true,
      false, 0.5f, count);
  // Per counted row (0, 2, 3): g > 0.5 in 1/4 of the columns (g = 3 and 1
  // count, so 2/4), u > 0.5 in 1/4, u < -0.5 in 1/4.
  CHECK(count.at<int64_t>({0}) == 10 + 3 * 64);
  CHECK(count.at<int64_t>({1}) == 20 + 3 * 32);
  CHECK(count.at<int64_t>({2}) == 30 + 3 * 32);
  // A second call adds again.
  swiglu_forward_and_per_token_cast_ref(x, "e4m3", 128, pos_to_token_topk,
                                        weights, pos_to_expert, false, true,
                                        false, 0.5f, count);
  CHECK(count.at<int64_t>({0}) == 10 + 6 * 64);
  // Expected rows from the spec: clamp g above only, u both sides.
  auto expected_act = [&](int64_t r, int64_t c, float w) {
    const float g = std::min(gs[c % 4], 0.5f);
    const float u = std::min(std::max(us[(c / 4) % 4], -0.5f), 0.5f);
    return spec_act(g, u) * w;
  };
  std::vector<float> act(E * H, 0.0f);
  const float w_of_row[4] = {1.0f, 0.0f, 0.0f, 2.0f};
  for (int64_t r : {0, 2, 3})
    for (int64_t c = 0; c < H; ++c)
      act[r * H + c] = expected_act(r, c, w_of_row[r]);
  QuantTensor e = cast_ref(f32(E, H, act), "e4m3", {1, 128}, {}, {}, true);
  CHECK(compare_exact(q.data, e.data) == "");
  CHECK(compare_exact(q.sf, e.sf) == "");
  // Row 1 (masked) is zero; row 2 (weight 0) holds signed zeros.
  for (int64_t c = 0; c < H; ++c)
    REQUIRE(byte_at(q.data, 1, c) == 0x00);
  CHECK(get(q.sf, 1, 0) == std::ldexp(1.0f, -22));
  // g = 3 -> 0.5 and u = 2 -> 0.5: act > 0, times weight 0 -> +0.
  CHECK(byte_at(q.data, 2, 0) == 0x00);
  // g = -3 (not clamped from below), u = 2 -> 0.5: act < 0, times 0 -> -0.
  CHECK(byte_at(q.data, 2, 1) == 0x80);
  // topk_weights without pos_to_token_topk is ignored.
  QuantTensor ignored = swiglu_forward_and_per_token_cast_ref(
      x, "e4m3", 128, {}, weights, {}, false, true);
  QuantTensor plain = swiglu_forward_and_per_token_cast_ref(
      x, "e4m3", 128, {}, {}, {}, false, true);
  CHECK(compare_exact(ignored.data, plain.data) == "");
}

TEST_CASE("swiglu forward: SF layouts and E = 0", "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 5, 512, 41);
  QuantTensor p = swiglu_forward_and_per_token_cast_ref(x, "e4m3", 128, {}, {},
                                                        {}, true, true, true);
  CHECK(p.sf.dtype() == DType::i32);
  CHECK(p.sf.shape() == shape_t{5, 1});
  CHECK(p.sf.strides() == shape_t{1, 8});
  QuantTensor r = swiglu_forward_and_per_token_cast_ref(x, "e4m3", 128, {}, {},
                                                        {}, false, true);
  CHECK(compare_exact(p.data, r.data) == "");
  CHECK(read_sf(p.sf, 4, 1) == get(r.sf, 4, 1));
  QuantTensor h = swiglu_forward_and_per_token_cast_ref(x, "e4m3", 256);
  CHECK(h.sf.shape() == shape_t{5, 1});
  QuantTensor e = swiglu_forward_and_per_token_cast_ref(
      HostTensor::zeros(DType::bf16, {0, 256}), "e4m3", 128);
  CHECK(e.data.shape() == shape_t{0, 128});
  CHECK(e.sf.shape() == shape_t{0, 1});
}

TEST_CASE("swiglu forward: argument checks", "[ref][quant]") {
  const std::string fn = "swiglu_forward_and_per_token_cast_ref: ";
  HostTensor x = HostTensor::zeros(DType::bf16, {4, 512});
  const int64_t s4[] = {4}, s3[] = {3}, s5[] = {5};
  HostTensor idx =
      HostTensor::from(DType::i32, s4, std::vector<int32_t>{0, 1, 2, 3});
  HostTensor w = HostTensor::zeros(DType::f32, {2, 2});
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(x, "e2m1", 128),
                    fn + "argument 'fmt' is 'e2m1'; requires 'e4m3'");
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(
                        HostTensor::zeros(DType::bf16, {4, 192}), "e4m3", 96),
                    fn + "argument 'x' has 2H = 192 columns; requires "
                         "H % 128 == 0");
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(x, "e4m3", 64),
                    fn + "argument 'num_per_channels' is 64; requires 128 or "
                         "H = 256");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_ref(x, "e4m3", 256, {}, {}, {}, true,
                                            true),
      fn + "argument 'use_tma_aligned_col_major_sf' is true with "
           "num_per_channels = 256; requires num_per_channels == 128");
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(
                        x, "e4m3", 128, {}, {}, {}, true, false, true),
                    fn + "argument 'use_packed_ue8m0' is true with "
                         "use_tma_aligned_col_major_sf=true and "
                         "round_sf=false; requires both to be true");
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(x, "e4m3", 128, idx),
                    fn + "argument 'topk_weights' is None while "
                         "'pos_to_token_topk' is given; requires both");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_ref(
          x, "e4m3", 128,
          HostTensor::from(DType::i32, s5, std::vector<int32_t>(5, 0)), w),
      fn + "argument 'pos_to_token_topk' has shape [5]; requires [4]");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_ref(
          x, "e4m3", 128,
          HostTensor::from(DType::i32, s4, std::vector<int32_t>{0, 4, 1, 1}),
          w),
      fn + "pos_to_token_topk[1] is 4; requires a negative value (padding) or "
           "an index < 4 into topk_weights");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_ref(
          x, "e4m3", 128, idx, HostTensor::zeros(DType::bf16, {2, 2})),
      fn + "argument 'topk_weights' has dtype bf16; requires "
           "f32");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_ref(
          x, "e4m3", 128, {}, {},
          HostTensor::from(DType::i64, s4, std::vector<int64_t>(4, 0))),
      fn + "argument 'pos_to_expert' has dtype i64; requires i32");
  HostTensor count =
      HostTensor::from(DType::i64, s3, std::vector<int64_t>(3, 0));
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(x, "e4m3", 128, {},
                                                          {}, {}, false, false,
                                                          false, {}, count),
                    fn + "argument 'clamped_count' is given while "
                         "'swiglu_clamp_value' is None; requires a clamp "
                         "value");
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_ref(
          x, "e4m3", 128, {}, {}, {}, false, false, false, 1.0f,
          HostTensor::from(DType::i32, s3, std::vector<int32_t>(3, 0))),
      fn + "argument 'clamped_count' has dtype i32; requires i64");
  CHECK_THROWS_WITH(swiglu_forward_and_per_token_cast_ref(
                        HostTensor::zeros(DType::e4m3, {4, 512}), "e4m3", 128),
                    fn + "argument 'x' has dtype e4m3; requires bf16 or f32");
}
