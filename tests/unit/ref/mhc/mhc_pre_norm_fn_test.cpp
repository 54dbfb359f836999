// mhc_pre_norm_fn_test.cpp - Tests of the mhc_pre_norm_fn reference (spec
// §3.3): TF32 rounding, RMS eps placement, n_splits, the norm-weight merge,
// backward against finite differences, the shared gradient buffer, errors.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"
#include "mhc_test_util.h"

#include <limits>

using namespace mhc_test;
using namespace tilejit::mhc;
using tilejit::ref::bits_to_f32;
using tilejit::ref::f32_to_bits;

TEST_CASE("round_to_tf32 adds 0x1000 and drops 13 bits", "[ref][mhc]") {
  using detail::round_to_tf32;
  const float e10 = std::ldexp(1.0f, -10), e11 = std::ldexp(1.0f, -11);
  CHECK(round_to_tf32(1.0f) == 1.0f);
  CHECK(round_to_tf32(1.0f + e11) == 1.0f + e10); // half: away from zero
  CHECK(round_to_tf32(-(1.0f + e11)) == -(1.0f + e10));
  CHECK(round_to_tf32(1.0f + 3 * e11) == 1.0f + 2 * e10); // half, odd: up
  CHECK(round_to_tf32(bits_to_f32(0x3F800FFF)) == 1.0f);  // below half
  CHECK(round_to_tf32(std::numeric_limits<float>::max()) ==
        std::numeric_limits<float>::infinity());
  CHECK(round_to_tf32(-std::numeric_limits<float>::infinity()) ==
        -std::numeric_limits<float>::infinity());
  CHECK(f32_to_bits(round_to_tf32(-0.0f)) == 0x80000000u);
  // Subnormals round on the same bit grid.
  CHECK(f32_to_bits(round_to_tf32(bits_to_f32(0x00001000))) == 0x00002000u);
  CHECK(f32_to_bits(round_to_tf32(bits_to_f32(0x00000FFF))) == 0u);
  // A NaN stays NaN, even one whose bits would carry into the sign.
  CHECK(std::isnan(round_to_tf32(bits_to_f32(0xFFFFF000))));
  CHECK(std::isnan(round_to_tf32(bits_to_f32(0x7FFFFFFF))));
}

TEST_CASE("mhc_pre_norm_fn computes mul * rsqrt(sq / Kd + eps)", "[ref][mhc]") {
  // mhc 1 (mhc3 = 3), H = 2: x = [3, 4], sq = 25, Kd = 2.
  HostTensor x = bf16({1, 1, 2}, {3, 4});
  HostTensor fn = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  MhcPreNormFnResult r = mhc_pre_norm_fn_ref(x, fn, std::nullopt, 0.5f);
  REQUIRE(r.out.shape() == Shape{1, 3});
  CHECK(values(r.mul) == Vec{3, 4, 7});
  CHECK(values(r.sq) == Vec{25});
  // eps is added to the mean square, inside the root: 1/sqrt(12.5 + 0.5).
  double rms = 1 / std::sqrt(13.0);
  Vec out = values(r.out);
  CHECK(out[0] == Approx(3 * rms).epsilon(1e-6));
  CHECK(out[1] == Approx(4 * rms).epsilon(1e-6));
  CHECK(out[2] == Approx(7 * rms).epsilon(1e-6));
  // All-zero residual: sq = 0, out = 0 (no division by zero).
  HostTensor zero = HostTensor::zeros(DType::bf16, {2, 1, 2});
  MhcPreNormFnResult z = mhc_pre_norm_fn_ref(zero, fn, std::nullopt, 1e-6f);
  for (double v : values(z.out))
    CHECK(v == 0);
}

TEST_CASE("mhc_pre_norm_fn rounds the merged fn to TF32", "[ref][mhc]") {
  const float e10 = std::ldexp(1.0f, -10), e11 = std::ldexp(1.0f, -11);
  HostTensor x = bf16({1, 1, 1}, {1});
  HostTensor fn = f32({3, 1}, {1, 1 + e11, 1});
  // Without a weight: 1 + 2^-11 rounds (half away) to 1 + 2^-10.
  MhcPreNormFnResult a = mhc_pre_norm_fn_ref(x, fn, std::nullopt, 0.0f);
  CHECK(values(a.fn_rounded) == Vec{1, 1 + e10, 1});
  CHECK(values(a.mul) == Vec{1, 1 + e10, 1});
  // With weight 1 + 2^-11 the product is rounded, not the factors.
  HostTensor w = f32({1}, {1 + e11});
  MhcPreNormFnResult b = mhc_pre_norm_fn_ref(x, fn, w, 0.0f);
  CHECK(values(b.fn_rounded)[0] == 1 + e10);
}

TEST_CASE("mhc_pre_norm_fn ignores n_splits (one partial sum)", "[ref][mhc]") {
  HostTensor x = bf16({13, 4, 8}, randn(13 * 32, 51));
  HostTensor fn = f32({24, 32}, randn(24 * 32, 52, 1e-2));
  HostTensor w = f32({32}, randn(32, 53, 0.1, 1.0));
  MhcPreNormFnResult base = mhc_pre_norm_fn_ref(x, fn, w, 1e-6f, true, 1);
  for (int splits : {2, 7, 16, 64}) {
    MhcPreNormFnResult r = mhc_pre_norm_fn_ref(x, fn, w, 1e-6f, false, splits);
    CHECK(compare_exact(r.out, base.out) == "");
    CHECK(compare_exact(r.mul, base.mul) == "");
  }
}

TEST_CASE("mhc_pre_norm_fn matches a float64 forward", "[ref][mhc]") {
  for (int mhc : {1, 2, 4}) {
    const int64_t n = 5, hid = 16, kd = mhc * hid;
    const int mhc3 = mhc * (mhc + 2);
    Vec xv = to_bf16(randn(n * kd, 60 + mhc));
    Vec fv = to_tf32(randn(mhc3 * kd, 70 + mhc, 0.1));
    MhcPreNormFnResult r = mhc_pre_norm_fn_ref(
        bf16({n, mhc, hid}, xv), f32({mhc3, kd}, fv), std::nullopt, 1e-6f);
    Vec want = norm_fn64(xv, fv, n, kd, mhc3, 1e-6f);
    Vec got = values(r.out);
    for (size_t i = 0; i < got.size(); ++i)
      CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-12));
  }
}

TEST_CASE("mhc_pre_norm_fn backward matches finite differences", "[ref][mhc]") {
  const int64_t n = 3, mhc = 4, hid = 4, kd = mhc * hid;
  const int mhc3 = 24;
  // eps 0.5 is about twice the mean square: its placement shows in the
  // gradient.
  for (double eps : {1e-6, 0.5}) {
    Vec xv = to_bf16(randn(n * kd, 81, 0.5));
    Vec fv = to_tf32(randn(mhc3 * kd, 82, 0.3));
    Vec c = to_f32(randn(n * mhc3, 83));
    HostTensor x = bf16({n, mhc, hid}, xv), fn = f32({mhc3, kd}, fv);
    MhcPreNormFnResult r =
        mhc_pre_norm_fn_ref(x, fn, std::nullopt, static_cast<float>(eps));
    MhcPreNormFnGrads g =
        mhc_pre_norm_fn_bwd_ref(f32({n, mhc3}, c), x, r.fn_rounded, r.mul, r.sq,
                                static_cast<float>(eps));
    REQUIRE(g.residual_grad.has_value());
    check_gradient(
        "residual", xv,
        [&](const Vec &v) {
          return dot(c, norm_fn64(v, fv, n, kd, mhc3, eps));
        },
        values(*g.residual_grad), 1e-2, 1e-2);
    check_gradient(
        "fn", fv,
        [&](const Vec &v) {
          return dot(c, norm_fn64(xv, v, n, kd, mhc3, eps));
        },
        values(g.fn_grad), 3e-3, 1e-3);
  }
}

TEST_CASE("mhc_pre_norm_fn backward with a norm weight matches finite "
          "differences",
          "[ref][mhc]") {
  const int64_t n = 4, mhc = 2, hid = 5, kd = mhc * hid;
  const int mhc3 = 8;
  const double eps = 1e-6;
  Vec xv = to_bf16(randn(n * kd, 91));
  Vec fv = to_f32(randn(mhc3 * kd, 92, 0.3));
  Vec wv = to_f32(randn(kd, 93, 0.1, 1.0));
  Vec c = to_f32(randn(n * mhc3, 94));
  HostTensor x = bf16({n, mhc, hid}, xv), fn = f32({mhc3, kd}, fv),
             w = f32({kd}, wv);
  MhcPreNormFnResult r = mhc_pre_norm_fn_ref(x, fn, w, eps);
  MhcPreNormFnGrads g = mhc_pre_norm_fn_bwd_ref(f32({n, mhc3}, c), x,
                                                r.fn_rounded, r.mul, r.sq, eps);
  MhcFnNormwMergeGrads m = mhc_fn_normw_merge_bwd_ref(g.fn_grad, fn, w);
  auto forward = [&](const Vec &f, const Vec &wt) {
    Vec merged(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      merged[i] = f[i] * wt[i % kd];
    return dot(c, norm_fn64(xv, merged, n, kd, mhc3, eps));
  };
  check_gradient(
      "fn", fv, [&](const Vec &v) { return forward(v, wv); }, values(m.fn_grad),
      3e-3, 1e-3);
  check_gradient(
      "norm_weight", wv, [&](const Vec &v) { return forward(fv, v); },
      values(m.norm_weight_grad), 3e-3, 1e-3);
}

TEST_CASE("mhc_fn_normw_merge backward accumulates into the buffers",
          "[ref][mhc]") {
  HostTensor fn = f32({2, 2}, {1, 2, 3, 4});
  HostTensor w = f32({2}, {0.5, -2});
  HostTensor g = f32({2, 2}, {1, 1, 2, -1});
  CHECK(values(mhc_fn_normw_merge_ref(fn, w)) == Vec{0.5, -4, 1.5, -8});
  MhcFnNormwMergeGrads fresh = mhc_fn_normw_merge_bwd_ref(g, fn, w);
  CHECK(values(fresh.fn_grad) == Vec{0.5, -2, 1, 2});
  CHECK(values(fresh.norm_weight_grad) == Vec{1 * 1 + 2 * 3, 1 * 2 - 1 * 4});
  HostTensor fb = f32({2, 2}, {10, 10, 10, 10}), wb = f32({2}, {100, 100});
  MhcFnNormwMergeGrads acc = mhc_fn_normw_merge_bwd_ref(g, fn, w, fb, wb);
  CHECK(acc.fn_grad.raw() == fb.raw());
  CHECK(values(fb) == Vec{10.5, 8, 11, 12});
  CHECK(values(wb) == Vec{107, 98});
}

TEST_CASE("mhc_pre_norm_fn backward adds into the shared residual buffer",
          "[ref][mhc]") {
  const int64_t n = 2, mhc = 4, hid = 3, kd = 12;
  HostTensor x = bf16({n, mhc, hid}, randn(n * kd, 101));
  HostTensor fn = f32({24, kd}, randn(24 * kd, 102, 0.2));
  HostTensor og = f32({n, 24}, randn(n * 24, 103));
  MhcPreNormFnResult r = mhc_pre_norm_fn_ref(x, fn, std::nullopt, 1e-6f);
  MhcPreNormFnGrads own =
      mhc_pre_norm_fn_bwd_ref(og, x, r.fn_rounded, r.mul, r.sq, 1e-6f);
  Vec before = to_bf16(randn(n * kd, 104));
  HostTensor buf = bf16({n, mhc, hid}, before);
  MhcPreNormFnGrads fused =
      mhc_pre_norm_fn_bwd_ref(og, x, r.fn_rounded, r.mul, r.sq, 1e-6f, buf);
  CHECK_FALSE(fused.residual_grad.has_value());
  CHECK(compare_exact(fused.fn_grad, own.fn_grad) == "");
  Vec after = values(buf), mine = values(*own.residual_grad);
  for (size_t i = 0; i < after.size(); ++i)
    CHECK(after[i] == Approx(before[i] + mine[i]).epsilon(1e-2).margin(1e-2));
  // Zero tokens: empty outputs, zero fn gradient.
  HostTensor x0 = HostTensor::zeros(DType::bf16, {0, 4, 3});
  MhcPreNormFnResult r0 = mhc_pre_norm_fn_ref(x0, fn, std::nullopt, 1e-6f);
  CHECK(r0.out.shape() == Shape{0, 24});
  MhcPreNormFnGrads g0 =
      mhc_pre_norm_fn_bwd_ref(HostTensor::zeros(DType::f32, {0, 24}), x0,
                              r0.fn_rounded, r0.mul, r0.sq, 1e-6f);
  CHECK(max_abs(values(g0.fn_grad)) == 0);
  CHECK(g0.residual_grad->shape() == Shape{0, 4, 3});
}

TEST_CASE("mhc_pre_norm_fn rejects bad arguments", "[ref][mhc]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {2, 4, 8});
  HostTensor fn = HostTensor::zeros(DType::f32, {24, 32});
  // f32 residual.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_ref(HostTensor::zeros(DType::f32, {2, 4, 8}), fn,
                          std::nullopt, 1e-6f),
      "mhc_pre_norm_fn_ref: argument 'residual' has dtype f32; requires bf16");
  // Five streams need 35 mixes; the projection stores at most 24.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_ref(HostTensor::zeros(DType::bf16, {2, 5, 8}), fn,
                          std::nullopt, 1e-6f),
      "mhc_pre_norm_fn_ref: argument 'residual' has shape [2, 5, 8] (mhc = "
      "5); requires 1 <= mhc <= 4");
  // H = 0.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_ref(HostTensor::zeros(DType::bf16, {2, 4, 0}), fn,
                          std::nullopt, 1e-6f),
      "mhc_pre_norm_fn_ref: argument 'residual' has shape [2, 4, 0] (H = 0); "
      "requires H >= 1");
  // fn with mhc rows only.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_ref(x, HostTensor::zeros(DType::f32, {4, 32}),
                          std::nullopt, 1e-6f),
      "mhc_pre_norm_fn_ref: argument 'mhc_fn' has shape [4, 32]; requires "
      "[24, 32]");
  // Weight of H instead of mhc*H.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_ref(x, fn, HostTensor::zeros(DType::f32, {8}), 1e-6f),
      "mhc_pre_norm_fn_ref: argument 'mhc_norm_weight' has shape "
      "[8]; requires [32]");
  // No split.
  CHECK_USER_ERROR(mhc_pre_norm_fn_ref(x, fn, std::nullopt, 1e-6f, true, 0),
                   "mhc_pre_norm_fn_ref: argument 'n_splits' is 0; requires "
                   ">= 1");
  MhcPreNormFnResult r = mhc_pre_norm_fn_ref(x, fn, std::nullopt, 1e-6f);
  // Gradient with mhc columns instead of mhc3.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_bwd_ref(HostTensor::zeros(DType::f32, {2, 4}), x,
                              r.fn_rounded, r.mul, r.sq, 1e-6f),
      "mhc_pre_norm_fn_bwd_ref: argument 'out_grad' has shape [2, 4]; "
      "requires [2, 24]");
  // An fp32 gradient buffer.
  CHECK_USER_ERROR(
      mhc_pre_norm_fn_bwd_ref(r.out, x, r.fn_rounded, r.mul, r.sq, 1e-6f,
                              HostTensor::zeros(DType::f32, {2, 4, 8})),
      "mhc_pre_norm_fn_bwd_ref: argument 'residual_grad_buf' has dtype f32; "
      "requires bf16");
  // The merge needs one weight per column.
  CHECK_USER_ERROR(
      mhc_fn_normw_merge_ref(fn, HostTensor::zeros(DType::f32, {24})),
      "mhc_fn_normw_merge_ref: argument 'mhc_norm_weight' has shape [24]; "
      "requires [32]");
  CHECK_USER_ERROR(
      mhc_fn_normw_merge_bwd_ref(fn, fn, HostTensor::zeros(DType::f32, {32}),
                                 HostTensor::zeros(DType::f32, {32})),
      "mhc_fn_normw_merge_bwd_ref: argument 'fn_grad_buf' has shape [32]; "
      "requires [24, 32]");
}

TEST_CASE("mhc_pre_norm_fn_partials: the parts add up to mhc_pre_norm_fn's "
          "product and sum of squares",
          "[ref][mhc]") {
  const int64_t t = 3, mhc = 4, hid = 24, kd = mhc * hid, mhc3 = 24;
  HostTensor residual = bf16({t, mhc, hid}, randn(t * kd, 711));
  HostTensor fn = f32({mhc3, kd}, randn(mhc3 * kd, 712, 0.1));
  MhcPreNormFnResult whole =
      mhc_pre_norm_fn_ref(residual, fn, std::nullopt, 1e-6f, false, 1);
  MhcNormFnPartials p = mhc_pre_norm_fn_partials_ref(residual, fn, 4);
  CHECK(p.mul.shape() == Shape{4, t, mhc3});
  CHECK(p.sq.shape() == Shape{4, t});
  const Vec mul = values(p.mul), sq = values(p.sq);
  const Vec want_mul = values(whole.mul), want_sq = values(whole.sq);
  for (int64_t i = 0; i < t * mhc3; ++i) {
    double sum = 0;
    for (int64_t s = 0; s < 4; ++s)
      sum += mul[s * t * mhc3 + i];
    CHECK(std::abs(sum - want_mul[i]) <= 1e-6 * (1 + std::abs(want_mul[i])));
  }
  for (int64_t i = 0; i < t; ++i) {
    const double sum = sq[i] + sq[t + i] + sq[2 * t + i] + sq[3 * t + i];
    CHECK(std::abs(sum - want_sq[i]) <= 1e-5 * want_sq[i]);
  }
  // One part: the product itself, the same float64 sums rounded once.
  MhcNormFnPartials one = mhc_pre_norm_fn_partials_ref(residual, fn, 1);
  CHECK(values(one.mul) == want_mul);
  CHECK(values(one.sq) == want_sq);
  CHECK_USER_ERROR(mhc_pre_norm_fn_partials_ref(residual, fn, 5),
                   "mhc_pre_norm_fn_partials_ref: argument 'n_splits' is 5; "
                   "requires a divisor of mhc * H = 96");
}
