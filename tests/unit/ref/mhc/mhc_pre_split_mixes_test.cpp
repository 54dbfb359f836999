// mhc_pre_split_mixes_test.cpp - Tests of the mhc_pre_split_mixes reference
// (spec §3.4): layout of pre/post/comb, the fma of in*scale+base, backward
// against finite differences, post_mult = 0, edges and errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("mhc_pre_split_mixes splits 24 mixes into pre, post and comb",
          "[ref][mhc]") {
  const int mhc = 4, mhc3 = 24;
  Vec in(mhc3);
  for (int j = 0; j < mhc3; ++j)
    in[j] = j;
  // scale (0, 0, 1): pre/post see only base; comb = in + base.
  HostTensor scale = f32({3}, {0, 0, 1});
  Vec base(mhc3, 0.0);
  base[1] = 2;        // pre[1]
  base[mhc + 2] = -1; // post[2]
  MhcSplitMixes r = mhc_pre_split_mixes_ref(
      f32({1, 1, mhc3}, in), scale, f32({mhc3}, base), mhc, 2.0f, 0.01f);
  REQUIRE(r.pre_mix.shape() == Shape{1, 1, 4, 1});
  REQUIRE(r.post_mix.shape() == Shape{1, 1, 4, 1});
  REQUIRE(r.comb_mix.shape() == Shape{1, 1, 4, 4});
  Vec pre = values(r.pre_mix), post = values(r.post_mix);
  CHECK(pre[0] == Approx(0.5 + 0.01).epsilon(1e-7));
  CHECK(pre[1] == Approx(sigmoid64(2) + 0.01).epsilon(1e-6));
  CHECK(post[0] == Approx(1.0).epsilon(1e-7)); // sigmoid(0) * 2
  CHECK(post[2] == Approx(2 * sigmoid64(-1)).epsilon(1e-6));
  // comb is row-major: comb[i][j] = in[2*mhc + i*mhc + j].
  Vec comb = values(r.comb_mix);
  for (int q = 0; q < 16; ++q)
    CHECK(comb[q] == 8 + q);
  // Each chunk has its own scale: (2, 3, 5) with in = 1, base = 0.
  MhcSplitMixes s = mhc_pre_split_mixes_ref(
      f32({1, mhc3}, Vec(mhc3, 1.0)), f32({3}, {2, 3, 5}),
      f32({mhc3}, Vec(mhc3, 0.0)), mhc, 1.0f, 0.0f);
  CHECK(values(s.pre_mix)[3] == Approx(sigmoid64(2)).epsilon(1e-6));
  CHECK(values(s.post_mix)[3] == Approx(sigmoid64(3)).epsilon(1e-6));
  CHECK(values(s.comb_mix)[15] == 5);
}

TEST_CASE("mhc_pre_split_mixes computes in*scale+base as one fma",
          "[ref][mhc]") {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24; a rounded product drops the 2^-24.
  const double a = 1 + std::ldexp(1.0, -12);
  Vec in(8, 0.0), base(8, 0.0);
  in[4] = a; // mhc 2: comb[0] is mix 2*mhc = 4
  base[4] = -1;
  MhcSplitMixes r = mhc_pre_split_mixes_ref(
      f32({1, 8}, in), f32({3}, {1, 1, a}), f32({8}, base), 2, 1.0f, 0.0f);
  CHECK(values(r.comb_mix)[0] == std::ldexp(1.0, -11) + std::ldexp(1.0, -24));
}

TEST_CASE("mhc_pre_split_mixes backward matches finite differences",
          "[ref][mhc]") {
  for (auto [mhc, post_mult] : {std::pair{4, 2.0}, std::pair{2, 1.0}}) {
    const int mhc3 = mhc * (mhc + 2);
    const int64_t a = 2, b = 3, n = a * b;
    const double pre_eps = 1e-2;
    Vec in = to_f32(randn(n * mhc3, 111 + mhc));
    Vec sc = to_f32(randn(3, 112 + mhc, 0.5, 1.0));
    Vec bs = to_f32(randn(mhc3, 113 + mhc));
    Vec c1 = to_f32(randn(n * mhc, 114)), c2 = to_f32(randn(n * mhc, 115));
    Vec c3 = to_f32(randn(n * mhc * mhc, 116));
    HostTensor tin = f32({a, b, mhc3}, in), tsc = f32({3}, sc),
               tbs = f32({mhc3}, bs);
    MhcSplitMixes f =
        mhc_pre_split_mixes_ref(tin, tsc, tbs, mhc, post_mult, pre_eps);
    MhcSplitMixesGrads g = mhc_pre_split_mixes_bwd_ref(
        f32({a, b, mhc, 1}, c1), f32({a, b, mhc, 1}, c2),
        f32({a, b, mhc, mhc}, c3), tin, f.post_mix, tsc, tbs, mhc, post_mult);
    auto loss = [&](const Vec &i, const Vec &s, const Vec &bb) {
      Split64 o = split64(i, s, bb, mhc, post_mult, pre_eps);
      return dot(c1, o.pre) + dot(c2, o.post) + dot(c3, o.comb);
    };
    check_gradient(
        "input_mixes", in, [&](const Vec &v) { return loss(v, sc, bs); },
        values(g.input_mixes_grad), 1e-4, 1e-6);
    check_gradient(
        "scale", sc, [&](const Vec &v) { return loss(in, v, bs); },
        values(g.mhc_scale_grad), 1e-4, 1e-6);
    check_gradient(
        "base", bs, [&](const Vec &v) { return loss(in, sc, v); },
        values(g.mhc_base_grad), 1e-4, 1e-6);
  }
}

TEST_CASE("mhc_pre_split_mixes backward with post_mult 0 and no tokens",
          "[ref][mhc]") {
  const int mhc = 4, mhc3 = 24;
  HostTensor in = f32({2, mhc3}, randn(2 * mhc3, 121));
  HostTensor sc = f32({3}, {1, 1, 1}), bs = f32({mhc3}, Vec(mhc3, 0.0));
  MhcSplitMixes f = mhc_pre_split_mixes_ref(in, sc, bs, mhc, 0.0f, 0.0f);
  CHECK(max_abs(values(f.post_mix)) == 0);
  HostTensor ones = f32({2, mhc, 1}, Vec(8, 1.0));
  MhcSplitMixesGrads g = mhc_pre_split_mixes_bwd_ref(
      ones, ones, HostTensor::zeros(DType::f32, {2, mhc, mhc}), in, f.post_mix,
      sc, bs, mhc, 0.0f);
  // post is identically 0: its columns get gradient 0 (not NaN).
  Vec ig = values(g.input_mixes_grad);
  for (int t = 0; t < 2; ++t)
    for (int m = 0; m < mhc; ++m) {
      CHECK(ig[t * mhc3 + mhc + m] == 0);
      CHECK(ig[t * mhc3 + m] != 0);
    }
  // Zero tokens: empty outputs, zero parameter gradients.
  HostTensor e = HostTensor::zeros(DType::f32, {0, mhc3});
  MhcSplitMixes fe = mhc_pre_split_mixes_ref(e, sc, bs, mhc, 1.0f, 0.0f);
  CHECK(fe.comb_mix.shape() == Shape{0, mhc, mhc});
  MhcSplitMixesGrads ge = mhc_pre_split_mixes_bwd_ref(
      fe.pre_mix, fe.post_mix, fe.comb_mix, e, fe.post_mix, sc, bs, mhc, 1.0f);
  CHECK(values(ge.mhc_scale_grad) == Vec{0, 0, 0});
  CHECK(ge.mhc_base_grad.shape() == Shape{mhc3});
}

TEST_CASE("mhc_pre_split_mixes rejects bad arguments", "[ref][mhc]") {
  HostTensor in = HostTensor::zeros(DType::f32, {2, 24});
  HostTensor sc = HostTensor::zeros(DType::f32, {3});
  HostTensor bs = HostTensor::zeros(DType::f32, {24});
  // 23 mixes for mhc 4.
  CHECK_USER_ERROR(
      mhc_pre_split_mixes_ref(HostTensor::zeros(DType::f32, {2, 23}), sc, bs, 4,
                              1.0f, 0.0f),
      "mhc_pre_split_mixes_ref: argument 'input_mixes' has shape [2, 23]; "
      "requires shape (..., 24) = (..., mhc_mult*(mhc_mult+2))");
  // Two scales.
  CHECK_USER_ERROR(mhc_pre_split_mixes_ref(in,
                                           HostTensor::zeros(DType::f32, {2}),
                                           bs, 4, 1.0f, 0.0f),
                   "mhc_pre_split_mixes_ref: argument 'mhc_scale' has shape "
                   "[2]; requires [3]");
  // A base of mhc entries.
  CHECK_USER_ERROR(mhc_pre_split_mixes_ref(in, sc,
                                           HostTensor::zeros(DType::f32, {4}),
                                           4, 1.0f, 0.0f),
                   "mhc_pre_split_mixes_ref: argument 'mhc_base' has shape "
                   "[4]; requires [24]");
  // No streams.
  CHECK_USER_ERROR(mhc_pre_split_mixes_ref(in, sc, bs, 0, 1.0f, 0.0f),
                   "mhc_pre_split_mixes_ref: argument 'mhc_mult' is 0; "
                   "requires >= 1");
  // bf16 mixes.
  CHECK_USER_ERROR(
      mhc_pre_split_mixes_ref(HostTensor::zeros(DType::bf16, {2, 24}), sc, bs,
                              4, 1.0f, 0.0f),
      "mhc_pre_split_mixes_ref: argument 'input_mixes' has dtype bf16; "
      "requires f32");
  // comb gradient without the (mhc, mhc) layout.
  HostTensor col = HostTensor::zeros(DType::f32, {2, 4, 1});
  CHECK_USER_ERROR(
      mhc_pre_split_mixes_bwd_ref(col, col,
                                  HostTensor::zeros(DType::f32, {2, 16}), in,
                                  col, sc, bs, 4, 1.0f),
      "mhc_pre_split_mixes_bwd_ref: argument 'comb_mix_grad' has shape [2, "
      "16]; requires [2, 4, 4]");
  CHECK_USER_ERROR(
      mhc_pre_split_mixes_bwd_ref(col, HostTensor::zeros(DType::f32, {2, 4}),
                                  HostTensor::zeros(DType::f32, {2, 4, 4}), in,
                                  col, sc, bs, 4, 1.0f),
      "mhc_pre_split_mixes_bwd_ref: argument 'post_mix_grad' has shape [2, "
      "4]; requires [2, 4, 1]");
}
