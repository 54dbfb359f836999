// mhc_post_test.cpp - Tests of the mhc_post reference (spec §3.6): comb's
// [source, destination] orientation, the chain order, backward by hand and
// against finite differences, mhc == 4 in the backward, errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("mhc_post mixes source stream i into destination o by comb[i, o]",
          "[ref][mhc]") {
  // mhc 2, H 1: x = 3, residual = [5, 7], post = [2, -1],
  // comb = [[1, 2], [4, 8]] (comb[i][o]); the transpose would give 25, 73.
  HostTensor out =
      mhc_post_ref(bf16({1, 1}, {3}), bf16({1, 2, 1}, {5, 7}),
                   f32({1, 2, 1}, {2, -1}), f32({1, 2, 2}, {1, 2, 4, 8}));
  REQUIRE(out.shape() == Shape{1, 2, 1});
  CHECK(values(out) == Vec{2 * 3 + 1 * 5 + 4 * 7, -3 + 2 * 5 + 8 * 7});
}

TEST_CASE("mhc_post starts from the rounded post*x, then fmas", "[ref][mhc]") {
  const double e7 = std::ldexp(1.0, -7), e23 = std::ldexp(1.0, -23);
  // post*x = (1 + 2^-23)(1 + 2^-7) rounds to 1 + 2^-7 + 2^-23 (the 2^-30
  // term is lost); the fma with comb = -1, res = 1 + 2^-7 leaves 2^-23.
  // Starting from comb*res and ending with fma(post, x) would keep 2^-30.
  HostTensor out =
      mhc_post_ref(bf16({1, 1}, {1 + e7}), bf16({1, 2, 1}, {1 + e7, 0}),
                   f32({1, 2, 1}, {1 + e23, 0}), f32({1, 2, 2}, {-1, 0, 0, 0}));
  CHECK(values(out)[0] == e23);
  // Stream order: post*x = 2^24, + 1 (lost), - 2^24 = 0.
  const double big = std::ldexp(1.0, 24);
  HostTensor o2 =
      mhc_post_ref(bf16({1, 1}, {big}), bf16({1, 2, 1}, {1, big}),
                   f32({1, 2, 1}, {1, 0}), f32({1, 2, 2}, {1, 0, -1, 0}));
  CHECK(values(o2)[0] == 0);
}

TEST_CASE("mhc_post backward by hand", "[ref][mhc]") {
  // mhc 4, H 1, small integers: every sum is exact.
  Vec comb(16), post = {1, 2, 3, 4}, res = {1, -1, 2, -2}, d_o = {1, 2, -1, 3};
  for (int q = 0; q < 16; ++q)
    comb[q] = q - 5;
  const double x = 2;
  MhcPostGrads g = mhc_post_bwd_ref(bf16({1, 4, 1}, d_o), bf16({1, 1}, {x}),
                                    bf16({1, 4, 1}, res), f32({1, 4, 1}, post),
                                    f32({1, 4, 4}, comb));
  Vec d_res = values(g.residual_grad), d_comb = values(g.comb_res_mix_grad);
  for (int i = 0; i < 4; ++i) {
    double want = 0;
    for (int o = 0; o < 4; ++o) {
      want += comb[i * 4 + o] * d_o[o];
      CHECK(d_comb[i * 4 + o] == res[i] * d_o[o]);
    }
    CHECK(d_res[i] == want);
    CHECK(values(g.post_layer_mix_grad)[i] == x * d_o[i]);
  }
  CHECK(values(g.x_grad)[0] == 1 * 1 + 2 * 2 - 3 + 4 * 3);
}

TEST_CASE("mhc_post backward matches finite differences", "[ref][mhc]") {
  const int64_t a = 2, b = 2, n = a * b, mhc = 4, hid = 6;
  Vec xv = to_bf16(randn(n * hid, 141)),
      rv = to_bf16(randn(n * mhc * hid, 142));
  Vec pv = to_f32(randn(n * mhc, 143)), cv = to_f32(randn(n * mhc * mhc, 144));
  Vec dv = to_bf16(randn(n * mhc * hid, 145));
  HostTensor x = bf16({a, b, hid}, xv), r = bf16({a, b, mhc, hid}, rv);
  HostTensor p = f32({a, b, mhc, 1}, pv), c = f32({a, b, mhc, mhc}, cv);
  MhcPostGrads g = mhc_post_bwd_ref(bf16({a, b, mhc, hid}, dv), x, r, p, c);
  auto loss = [&](const Vec &xx, const Vec &rr, const Vec &pp, const Vec &cc) {
    return dot(dv, post64(xx, rr, pp, cc, n, mhc, hid));
  };
  check_gradient(
      "x", xv, [&](const Vec &v) { return loss(v, rv, pv, cv); },
      values(g.x_grad), 1e-2, 1e-2);
  check_gradient(
      "residual", rv, [&](const Vec &v) { return loss(xv, v, pv, cv); },
      values(g.residual_grad), 1e-2, 1e-2);
  check_gradient(
      "post_layer_mix", pv, [&](const Vec &v) { return loss(xv, rv, v, cv); },
      values(g.post_layer_mix_grad), 1e-5, 1e-6);
  check_gradient(
      "comb_res_mix", cv, [&](const Vec &v) { return loss(xv, rv, pv, v); },
      values(g.comb_res_mix_grad), 1e-5, 1e-6);
  // The forward matches the float64 one to bf16 rounding.
  Vec got = values(mhc_post_ref(x, r, p, c));
  Vec want = post64(xv, rv, pv, cv, n, mhc, hid);
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == Approx(want[i]).epsilon(4e-3).margin(1e-6));
}

TEST_CASE("mhc_post edges", "[ref][mhc]") {
  HostTensor x0 = HostTensor::zeros(DType::bf16, {0, 8});
  HostTensor r0 = HostTensor::zeros(DType::bf16, {0, 4, 8});
  HostTensor p0 = HostTensor::zeros(DType::f32, {0, 4, 1});
  HostTensor c0 = HostTensor::zeros(DType::f32, {0, 4, 4});
  CHECK(mhc_post_ref(x0, r0, p0, c0).shape() == Shape{0, 4, 8});
  CHECK(mhc_post_bwd_ref(r0, x0, r0, p0, c0).comb_res_mix_grad.shape() ==
        Shape{0, 4, 4});
  // Writes into out; a single stream with H = 1.
  HostTensor out = HostTensor::zeros(DType::bf16, {1, 1});
  mhc_post_ref(bf16({1}, {2}), bf16({1, 1}, {3}), f32({1, 1}, {4}),
               f32({1, 1}, {5}), out);
  CHECK(values(out) == Vec{4 * 2 + 5 * 3});
  // Overflow to inf in bf16: 2^127 * 4.
  Vec big =
      values(mhc_post_ref(bf16({1}, {std::ldexp(1.0, 127)}), bf16({1, 1}, {0}),
                          f32({1, 1}, {4}), f32({1, 1}, {0})));
  CHECK(std::isinf(big[0]));
}

TEST_CASE("mhc_post rejects bad arguments", "[ref][mhc]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {2, 8});
  HostTensor r = HostTensor::zeros(DType::bf16, {2, 4, 8});
  HostTensor p = HostTensor::zeros(DType::f32, {2, 4, 1});
  HostTensor c = HostTensor::zeros(DType::f32, {2, 4, 4});
  // x with another H.
  CHECK_USER_ERROR(
      mhc_post_ref(HostTensor::zeros(DType::bf16, {2, 7}), r, p, c),
      "mhc_post_ref: argument 'x' has shape [2, 7]; requires [2, 8]");
  // comb flattened.
  CHECK_USER_ERROR(
      mhc_post_ref(x, r, p, HostTensor::zeros(DType::f32, {2, 16})),
      "mhc_post_ref: argument 'comb_res_mix' has shape [2, 16]; requires [2, "
      "4, 4]");
  // bf16 post mix.
  CHECK_USER_ERROR(
      mhc_post_ref(x, r, HostTensor::zeros(DType::bf16, {2, 4, 1}), c),
      "mhc_post_ref: argument 'post_layer_mix' has dtype bf16; requires f32");
  // Non-contiguous residual.
  HostTensor rt = HostTensor::zeros(DType::bf16, {2, 8, 4}).transposed(1, 2);
  CHECK_USER_ERROR(mhc_post_ref(x, rt, p, c),
                   "mhc_post_ref: argument 'residual' has shape [2, 4, 8] and "
                   "strides [32, 1, 4]; requires a contiguous tensor");
  // The backward is written for four streams.
  HostTensor r2 = HostTensor::zeros(DType::bf16, {2, 2, 8});
  CHECK_USER_ERROR(mhc_post_bwd_ref(r2, x, r2,
                                    HostTensor::zeros(DType::f32, {2, 2, 1}),
                                    HostTensor::zeros(DType::f32, {2, 2, 2})),
                   "mhc_post_bwd_ref: argument 'residual' has shape [2, 2, 8] "
                   "(mhc = 2); requires mhc == 4");
  CHECK_USER_ERROR(mhc_post_bwd_ref(x, x, r, p, c),
                   "mhc_post_bwd_ref: argument 'out_grad' has shape [2, 8]; "
                   "requires [2, 4, 8]");
}
