// swiglu_backward_cast21_test.cpp - TileKernels 2.1's FP8
// swiglu_backward_and_per_token_cast (tk21_ops §3.9): the plain backward
// of the dequantized input, the e4m3 cast of its f32 gradient in every
// scale layout, zero scales on padding rows, and the argument checks.
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace quant_test;

namespace {

HostTensor i32(std::vector<int32_t> v) {
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  return HostTensor::from(DType::i32, shape, v);
}

/// A 2-D tensor's values as f32 (exact from bf16).
HostTensor g_f32_of(const HostTensor &t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.size(0); ++i)
    for (int64_t j = 0; j < t.size(1); ++j)
      v.push_back(get(t, i, j));
  return f32(t.size(0), t.size(1), v);
}

/// The scale of row t's group j in any of the three layouts, as a float.
float scale_at(const HostTensor &sf, int64_t t, int64_t j) {
  if (sf.dtype() == DType::f32)
    return sf.at<float>({t, j});
  const uint32_t word = static_cast<uint32_t>(sf.at<int32_t>({t, j / 4}));
  const uint32_t biased = (word >> (8 * (j % 4))) & 0xffu;
  return tilejit::ref::bits_to_f32(biased << 23);
}

} // namespace

TEST_CASE("swiglu_backward_and_per_token_cast (2.1): the dequantized "
          "backward, cast from f32",
          "[ref][quant]") {
  const int64_t T = 8, H = 256;
  // x quantized with groups of 32; its gradient cast in groups of 128.
  const QuantTensor x =
      per_token_cast_ref(randn(DType::f32, T, 2 * H, 21, 2.0f), "e4m3", 32);
  const HostTensor g = randn(DType::bf16, T, H, 22);
  const int64_t sT[] = {T};
  std::vector<float> wv(T);
  for (int64_t t = 0; t < T; ++t)
    wv[t] = 0.25f + 0.25f * static_cast<float>(t);
  const HostTensor w = HostTensor::from(DType::f32, sT, wv);
  // psum {3} with alignment 4: row 3 is padding, rows 4..7 past the experts.
  const auto psum = i32({3});
  const float rsf = 1.5f, c = 3.0f;
  const HostTensor xf = dequantize_ref(x, {1, 32});
  const auto plain =
      swiglu_backward_ref(xf, g_f32_of(g), "fp32", psum, w, rsf, c, true, 4);
  struct Layout {
    bool col_major, round_sf, packed;
  };
  for (Layout l : {Layout{false, false, false}, Layout{true, false, false},
                   Layout{true, true, true}}) {
    INFO("col_major " << l.col_major << ", round_sf " << l.round_sf
                      << ", packed " << l.packed);
    const auto r = swiglu_backward_and_per_token_cast_21_ref(
        x, g, 128, psum, w, rsf, c, true, 4, l.col_major, l.round_sf, l.packed);
    REQUIRE(r.x_grad.dtype() == DType::bf16);
    REQUIRE(r.x_grad.shape() == shape_t{T, 2 * H});
    REQUIRE(r.act_out.dtype() == DType::bf16);
    REQUIRE(r.weight_grad.shape() == shape_t{T});
    REQUIRE(r.x_grad_fp8.data.shape() == shape_t{T, 2 * H});
    for (int64_t t = 0; t < T; ++t) {
      const bool padding = t == 3;
      CHECK(r.weight_grad.data<float>()[t] ==
            plain.weight_grad.data<float>()[t]);
      for (int64_t j = 0; j < 2 * H; ++j) {
        INFO("row " << t << ", column " << j);
        const float d = get(plain.x_grad, t, j);
        CHECK(r.x_grad.at<uint16_t>({t, j}) == tilejit::ref::f32_to_bf16(d));
        if (j < H)
          CHECK(r.act_out.at<uint16_t>({t, j}) ==
                tilejit::ref::f32_to_bf16(get(plain.act_out, t, j)));
      }
      for (int64_t grp = 0; grp < 2 * H / 128; ++grp) {
        INFO("row " << t << ", group " << grp);
        float amax = 0.0f;
        for (int64_t j = grp * 128; j < (grp + 1) * 128; ++j)
          amax = std::max(amax, std::fabs(get(plain.x_grad, t, j)));
        const float sf = scale_at(r.x_grad_fp8.sf, t, grp);
        if (padding) {
          CHECK(bits(sf) == 0u);
          for (int64_t j = grp * 128; j < (grp + 1) * 128; ++j)
            CHECK(byte_at(r.x_grad_fp8.data, t, j) == 0);
          continue;
        }
        // The scale of the f32 gradient's group (not the bf16 one's).
        const float exact = std::max(amax, 1e-4f) / 448.0f;
        if (l.round_sf)
          CHECK(sf == std::exp2(std::ceil(std::log2(exact))));
        else
          CHECK(sf == exact);
        for (int64_t j = grp * 128; j < (grp + 1) * 128; ++j) {
          const double back =
              tilejit::ref::e4m3_to_f32(byte_at(r.x_grad_fp8.data, t, j)) *
              double{sf};
          CHECK(std::fabs(back - get(plain.x_grad, t, j)) <=
                error_bound(Fmt::e4m3, get(plain.x_grad, t, j), sf));
        }
      }
    }
  }
}

TEST_CASE("swiglu_backward_and_per_token_cast (2.1): argument checks",
          "[ref][quant]") {
  const std::string fn = "swiglu_backward_and_per_token_cast_21_ref: ";
  const QuantTensor x{HostTensor::zeros(DType::e4m3, {4, 256}),
                      HostTensor::zeros(DType::f32, {4, 2})};
  const HostTensor g = HostTensor::zeros(DType::bf16, {4, 128});
  CHECK_NOTHROW(swiglu_backward_and_per_token_cast_21_ref(x, g, 32));
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_21_ref(
          {x.data, HostTensor::zeros(DType::f32, {4, 4})}, g, 128),
      fn + "argument 'x.sf' is f32[4, 4]; requires [4, 2H / bk] with bk 32 "
           "or 128 dividing H = 128");
  CHECK_THROWS_WITH(swiglu_backward_and_per_token_cast_21_ref(x, g, 64),
                    fn + "argument 'num_per_channels' is 64; requires 32 or "
                         "128");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_21_ref(
          {HostTensor::zeros(DType::bf16, {4, 256}), x.sf}, g, 128),
      fn + "argument 'x' has dtype bf16; requires e4m3");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_21_ref(
          x, g, 128, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
          false, 128, false, false, true),
      fn + "argument 'use_packed_ue8m0' is true with "
           "use_tma_aligned_col_major_sf=false and round_sf=false; requires "
           "both to be true");
}
