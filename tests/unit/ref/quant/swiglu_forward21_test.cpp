// swiglu_forward21_test.cpp - TileKernels 2.1's plain swiglu_forward
// (tk21_ops §3.8) and its psum row layout: which rows are valid, the
// operation order, weights times routed_scaling_factor, the clamp and its
// four counters, bf16 rounding, untouched invalid rows, argument checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

HostTensor i32(std::vector<int32_t> v) {
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  return HostTensor::from(DType::i32, shape, v);
}

/// The spec's activation, written out: l / (1 + expf(-l)) * r.
float spec_act(float l, float r) {
  const float den = 1.0f + std::exp(-l);
  return (l / den) * r;
}

} // namespace

TEST_CASE("psum_valid_rows: aligned expert starts, padding, past the last",
          "[ref][quant]") {
  // Experts of 3, 0 and 172 rows, aligned to 128: expert 0 owns [0, 3),
  // expert 1 [128, 3) (none), expert 2 [128, 300); [3, 128) is padding and
  // rows from 300 on belong to no expert.
  const std::vector<bool> v = psum_valid_rows(i32({3, 3, 300}), 400, 128);
  REQUIRE(v.size() == 400);
  for (int64_t r = 0; r < 400; ++r) {
    INFO("row " << r);
    CHECK(v[r] == (r < 3 || (r >= 128 && r < 300)));
  }
  // Without psum every row is valid; alignment 1 leaves no padding.
  CHECK(psum_valid_rows(std::nullopt, 5) == std::vector<bool>(5, true));
  CHECK(psum_valid_rows(i32({2, 5}), 6, 1) ==
        std::vector<bool>{true, true, true, true, true, false});
  CHECK_THROWS_WITH(psum_valid_rows(i32({4, 2}), 8),
                    "psum_valid_rows: psum_num_tokens_per_expert[1] is 2, "
                    "below the previous 4; requires a non-decreasing prefix "
                    "sum");
}

TEST_CASE("swiglu_forward (2.1): order, weights x rsf, clamp counters",
          "[ref][quant]") {
  const int64_t T = 4, H = 64;
  std::vector<float> v(static_cast<size_t>(T * 2 * H));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < H; ++j) {
      v[t * 2 * H + j] = 0.25f * static_cast<float>(j % 17) - 2.0f; // l
      v[t * 2 * H + H + j] =
          0.75f * static_cast<float>(t + 1) - 1.25f * (j % 3);
    }
  const HostTensor x = f32(T, 2 * H, v);
  const HostTensor w =
      HostTensor::from(DType::f32, std::vector<int64_t>{T},
                       std::vector<float>{0.5f, 2.0f, 0.125f, 3.0f});
  const float rsf = 2.5f, c = 1.5f;
  const int64_t s4[] = {4};
  HostTensor counts =
      HostTensor::from(DType::i64, s4, std::vector<int64_t>{1, 2, 3, 4});
  // Rows 0 and 2 valid: psum {1, 3} with alignment 2 gives expert 0 row 0,
  // expert 1 [2, 3); row 1 is padding, row 3 past the last expert.
  const HostTensor out =
      swiglu_forward_ref(x, "fp32", i32({1, 3}), w, rsf, c, counts, 2);
  REQUIRE(out.shape() == shape_t{T, H});
  int64_t over_l = 0, over_r = 0, under_r = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < H; ++j) {
      INFO("row " << t << ", column " << j);
      if (t == 1 || t == 3) {
        CHECK(get(out, t, j) == 0.0f);
        continue;
      }
      float l = v[t * 2 * H + j], r = v[t * 2 * H + H + j];
      over_l += l > c;
      over_r += r > c;
      under_r += r < -c;
      l = std::min(l, c);
      r = std::max(std::min(r, c), -c);
      const float weight = w.data<float>()[t] * rsf;
      CHECK(bits(get(out, t, j)) == bits(spec_act(l, r) * weight));
    }
  // Counted over the two valid rows only, added to what was there.
  CHECK(counts.at<int64_t>({0}) == 1 + over_l);
  CHECK(counts.at<int64_t>({1}) == 2 + over_r);
  CHECK(counts.at<int64_t>({2}) == 3 + under_r);
  CHECK(counts.at<int64_t>({3}) == 4 + 2 * H);
  CHECK(over_l > 0);
  CHECK(over_r > 0);
  CHECK(under_r > 0);

  // bf16 out: the same values rounded to nearest even; without weights a
  // is not multiplied (a weight of 1.0 would give the same bits anyway).
  const HostTensor b = swiglu_forward_ref(x, "bf16");
  REQUIRE(b.dtype() == DType::bf16);
  for (int64_t j = 0; j < H; ++j) {
    const float a = spec_act(v[j], v[H + j]);
    CHECK(b.at<uint16_t>({0, j}) == tilejit::ref::f32_to_bf16(a));
  }
}

TEST_CASE("swiglu_forward (2.1): argument checks", "[ref][quant]") {
  const std::string fn = "swiglu_forward_ref: ";
  const HostTensor x = HostTensor::zeros(DType::bf16, {4, 256});
  CHECK_THROWS_WITH(swiglu_forward_ref(x, "e4m3"),
                    fn + "argument 'fmt' is 'e4m3'; requires 'bf16' or "
                         "'fp32'");
  CHECK_THROWS_WITH(
      swiglu_forward_ref(HostTensor::zeros(DType::bf16, {4, 192}), "bf16"),
      fn + "argument 'x' has 2H = 192 columns; requires H % 64 == 0");
  CHECK_THROWS_WITH(
      swiglu_forward_ref(x, "bf16", std::nullopt, std::nullopt, 2.0f),
      fn + "argument 'routed_scaling_factor' is given while "
           "'topk_weights' is None; requires weights");
  const int64_t s4[] = {4};
  CHECK_THROWS_WITH(
      swiglu_forward_ref(x, "bf16", std::nullopt, std::nullopt, std::nullopt,
                         std::nullopt, HostTensor::zeros(DType::i64, {4})),
      fn + "argument 'clamped_count' is given while 'clamp_value' is None; "
           "requires a clamp value");
  CHECK_THROWS_WITH(swiglu_forward_ref(x, "bf16", std::nullopt,
                                       HostTensor::zeros(DType::f32, {5})),
                    fn + "argument 'topk_weights' has shape [5]; requires [4]");
  (void)s4;
}

TEST_CASE("swiglu_forward_and_per_token_cast (2.1 form): the fp32 activation, "
          "cast per token",
          "[ref][quant]") {
  // The valid rows equal per_token_cast_ref of swiglu_forward_ref's fp32
  // output (the cast sees the unrounded activation), for both group sizes
  // and the three scale layouts.
  const int64_t T = 10, H = 256;
  const HostTensor x = randn(DType::bf16, T, 2 * H, 21, 2.0f);
  const int64_t sT[] = {T};
  std::vector<float> wv(T);
  for (int64_t t = 0; t < T; ++t)
    wv[t] = 0.25f * static_cast<float>(t + 1);
  const HostTensor w = HostTensor::from(DType::f32, sT, wv);
  const int64_t sE[] = {2};
  const HostTensor psum =
      HostTensor::from(DType::i32, sE, std::vector<int32_t>{3, 7});
  for (int64_t bk : {32, 128})
    for (auto [col, round, packed] :
         {std::tuple{false, false, false}, std::tuple{true, true, false},
          std::tuple{true, true, true}}) {
      const QuantTensor q = swiglu_forward_and_per_token_cast_21_ref(
          x, "e4m3", bk, psum, w, 1.5f, col, round, packed, 3.0f, std::nullopt,
          4);
      const HostTensor a =
          swiglu_forward_ref(x, "fp32", psum, w, 1.5f, 3.0f, std::nullopt, 4);
      const QuantTensor want =
          per_token_cast_ref(a, "e4m3", bk, std::nullopt, col, round, packed);
      // psum {3, 7}, alignment 4: rows 0..2 and 4..6 valid.
      for (int64_t t : {0, 1, 2, 4, 5, 6}) {
        INFO("bk " << bk << " flags " << col << round << packed << " row "
                   << t);
        for (int64_t j = 0; j < H; ++j)
          CHECK(byte_at(q.data, t, j) == byte_at(want.data, t, j));
        if (packed)
          for (int64_t word = 0; word < (H / bk + 3) / 4; ++word)
            CHECK(q.sf.at<int32_t>({t, word}) ==
                  want.sf.at<int32_t>({t, word}));
        else
          for (int64_t g = 0; g < H / bk; ++g)
            CHECK(bits(get(q.sf, t, g)) == bits(get(want.sf, t, g)));
      }
      CHECK(q.sf.strides() == want.sf.strides());
    }
  CHECK_THROWS_WITH(
      swiglu_forward_and_per_token_cast_21_ref(x, "e4m3", 64),
      "swiglu_forward_and_per_token_cast_21_ref: argument 'num_per_channels' "
      "is 64; requires 32 or 128");
}
