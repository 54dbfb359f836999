// mhc_head_compute_mix_test.cpp - Tests of the mhc_head_compute_mix
// reference (spec §3.7): the formula and its fma, backward against finite
// differences, edges and errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("mhc_head_compute_mix is sigmoid(in*scale + base) + eps",
          "[ref][mhc]") {
  Vec got = values(mhc_head_compute_mix_ref(f32({1, 1, 4}, {0, 1, 1, -1}),
                                            f32({1}, {2}),
                                            f32({4}, {0, 0, 1, 0.5}), 0.01f));
  CHECK(got[0] == Approx(0.5 + 0.01).epsilon(1e-7));
  CHECK(got[1] == Approx(sigmoid64(2) + 0.01).epsilon(1e-6));
  CHECK(got[2] == Approx(sigmoid64(3) + 0.01).epsilon(1e-6));
  CHECK(got[3] == Approx(sigmoid64(-1.5) + 0.01).epsilon(1e-6));
}

TEST_CASE("mhc_head_compute_mix forms in*scale+base with one fma",
          "[ref][mhc]") {
  // in*scale = 16 + 2^-7 + 2^-20 (a tie that a rounded product sends to
  // 16 + 2^-7); base = -(20 + 2^-7), so z = -4 + 2^-20 with the fma and -4
  // without. sigmoid differs there by about 9 ulp.
  const double in = 1 + std::ldexp(1.0, -12);
  const double scale = 16 + std::ldexp(1.0, -8);
  const double base = -(20 + std::ldexp(1.0, -7));
  double got = values(mhc_head_compute_mix_ref(
      f32({1, 1}, {in}), f32({1}, {scale}), f32({1}, {base}), 0.0f))[0];
  double fused = sigmoid64(-4 + std::ldexp(1.0, -20)), split = sigmoid64(-4);
  CHECK(std::abs(got - fused) < 4e-9);
  CHECK(std::abs(got - split) > 1e-8);
}

TEST_CASE("mhc_head_compute_mix backward matches finite differences",
          "[ref][mhc]") {
  const int64_t a = 2, b = 3, mhc = 4, n = a * b;
  const double eps = 1e-2;
  Vec in = to_f32(randn(n * mhc, 151)), sc = to_f32({0.7});
  Vec bs = to_f32(randn(mhc, 152)), c = to_f32(randn(n * mhc, 153));
  HostTensor tin = f32({a, b, mhc}, in), tsc = f32({1}, sc),
             tbs = f32({mhc}, bs);
  Vec fwd = values(mhc_head_compute_mix_ref(tin, tsc, tbs, eps));
  Vec want = head_mix64(in, sc[0], bs, eps);
  for (size_t i = 0; i < fwd.size(); ++i)
    CHECK(fwd[i] == Approx(want[i]).epsilon(1e-6));
  MhcHeadComputeMixGrads g =
      mhc_head_compute_mix_bwd_ref(f32({a, b, mhc}, c), tin, tsc, tbs);
  check_gradient(
      "input_mix", in,
      [&](const Vec &v) { return dot(c, head_mix64(v, sc[0], bs, eps)); },
      values(g.input_mix_grad), 1e-4, 1e-6);
  check_gradient(
      "scale", sc,
      [&](const Vec &v) { return dot(c, head_mix64(in, v[0], bs, eps)); },
      values(g.mhc_scale_grad), 1e-4, 1e-6);
  check_gradient(
      "base", bs,
      [&](const Vec &v) { return dot(c, head_mix64(in, sc[0], v, eps)); },
      values(g.mhc_base_grad), 1e-4, 1e-6);
}

TEST_CASE("mhc_head_compute_mix edges and errors", "[ref][mhc]") {
  HostTensor sc = f32({1}, {1}), bs = f32({4}, {0, 0, 0, 0});
  HostTensor e = HostTensor::zeros(DType::f32, {0, 4});
  CHECK(mhc_head_compute_mix_ref(e, sc, bs, 0.0f).shape() == Shape{0, 4});
  MhcHeadComputeMixGrads g = mhc_head_compute_mix_bwd_ref(e, e, sc, bs);
  CHECK(values(g.mhc_scale_grad) == Vec{0});
  CHECK(values(g.mhc_base_grad) == Vec{0, 0, 0, 0});
  // Saturated sigmoid: inputs of +-1e30 give exactly 1 and 0 (+ eps).
  Vec s = values(
      mhc_head_compute_mix_ref(f32({1, 4}, {1e30, -1e30, 0, 0}), sc, bs, 0.0f));
  CHECK(s[0] == 1);
  CHECK(s[1] == 0);
  // Scale of three values.
  CHECK_USER_ERROR(
      mhc_head_compute_mix_ref(f32({1, 4}, Vec(4, 0.0)),
                               HostTensor::zeros(DType::f32, {3}), bs, 0.0f),
      "mhc_head_compute_mix_ref: argument 'mhc_scale' has shape [3]; requires "
      "[1]");
  // Base of another length than the last dim.
  CHECK_USER_ERROR(mhc_head_compute_mix_ref(f32({1, 4}, Vec(4, 0.0)), sc,
                                            HostTensor::zeros(DType::f32, {24}),
                                            0.0f),
                   "mhc_head_compute_mix_ref: argument 'mhc_base' has shape "
                   "[24]; requires [4]");
  // A scalar input.
  CHECK_USER_ERROR(
      mhc_head_compute_mix_ref(HostTensor::zeros(DType::f32, {}), sc, bs, 0.0f),
      "mhc_head_compute_mix_ref: argument 'input_mix' has shape "
      "[]; requires shape (..., mhc)");
  CHECK_USER_ERROR(
      mhc_head_compute_mix_bwd_ref(HostTensor::zeros(DType::f32, {2, 4}),
                                   f32({1, 4}, Vec(4, 0.0)), sc, bs),
      "mhc_head_compute_mix_bwd_ref: argument 'out_grad' has shape [2, 4]; "
      "requires [1, 4]");
}
