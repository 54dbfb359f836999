// mhc_pre_big_fuse_test.cpp - Tests of the mhc_pre_big_fuse reference (spec
// §3.8): bit-identical to chaining norm_fn, split_mixes, Sinkhorn and
// apply_mix over shapes and parameters; edges and errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

namespace {

struct Params {
  Shape lead;
  int mhc;
  int64_t hid;
  double fn_scale;
  float rms_eps, pre_eps, sinkhorn_eps, post_mult;
  int repeat, n_splits;
};

void check_against_chain(const Params &p, uint32_t seed) {
  const int mhc3 = p.mhc * (p.mhc + 2);
  const int64_t kd = p.mhc * p.hid;
  Shape rshape = p.lead;
  rshape.push_back(p.mhc);
  rshape.push_back(p.hid);
  int64_t n = 1;
  for (int64_t d : p.lead)
    n *= d;
  HostTensor residual = bf16(rshape, randn(n * kd, seed));
  HostTensor fn = f32({mhc3, kd}, randn(mhc3 * kd, seed + 1, p.fn_scale));
  HostTensor scale = f32({3}, randn(3, seed + 2, 0.1));
  HostTensor base = f32({mhc3}, randn(mhc3, seed + 3, 0.1));

  MhcBigFuseResult fused =
      mhc_pre_big_fuse_ref(residual, fn, scale, base, p.rms_eps, p.pre_eps,
                           p.sinkhorn_eps, p.post_mult, p.repeat, p.n_splits);
  MhcPreNormFnResult norm = mhc_pre_norm_fn_ref(residual, fn, std::nullopt,
                                                p.rms_eps, false, p.n_splits);
  MhcSplitMixes split = mhc_pre_split_mixes_ref(norm.out, scale, base, p.mhc,
                                                p.post_mult, p.pre_eps);
  HostTensor comb =
      sinkhorn_normalize_ref(split.comb_mix, p.repeat, p.sinkhorn_eps);
  HostTensor layer_input = mhc_pre_apply_mix_ref(residual, split.pre_mix);
  CHECK(compare_exact(fused.post_mix, split.post_mix) == "");
  CHECK(compare_exact(fused.comb_mix, comb) == "");
  CHECK(compare_exact(fused.layer_input, layer_input) == "");
}

} // namespace

TEST_CASE("mhc_pre_big_fuse equals the chain of the separate ops",
          "[ref][mhc]") {
  uint32_t seed = 200;
  // The spec's test set-up (fn ~ 1e-4, eps 1e-6, post_mult 1, repeat 10) at
  // small sizes, then other sizes and parameters.
  for (int64_t hid : {1, 8, 33})
    for (Shape lead : {Shape{1, 5}, Shape{2, 3}, Shape{1}})
      check_against_chain(
          {lead, 4, hid, 1e-4, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10, 16}, seed += 10);
  check_against_chain({{7}, 4, 16, 0.1, 1e-6f, 1e-2f, 1e-6f, 2.0f, 10, 1},
                      seed += 10);
  check_against_chain({{7}, 4, 16, 0.3, 1e-3f, 0.0f, 0.1f, 2.0f, 1, 7},
                      seed += 10);
  check_against_chain({{3}, 2, 8, 0.1, 1e-6f, 1e-6f, 1e-6f, 1.0f, 3, 16},
                      seed += 10);
  check_against_chain({{3}, 1, 8, 0.1, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10, 16},
                      seed += 10);
}

TEST_CASE("mhc_pre_big_fuse edges", "[ref][mhc]") {
  HostTensor fn = HostTensor::zeros(DType::f32, {24, 32});
  HostTensor scale = f32({3}, {1, 1, 1}),
             base = HostTensor::zeros(DType::f32, {24});
  // No tokens.
  MhcBigFuseResult e =
      mhc_pre_big_fuse_ref(HostTensor::zeros(DType::bf16, {1, 0, 4, 8}), fn,
                           scale, base, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10);
  CHECK(e.comb_mix.shape() == Shape{1, 0, 4, 4});
  CHECK(e.layer_input.shape() == Shape{1, 0, 8});
  // fn = 0 and base = 0: pre = 1/2 + eps, post = 1/2, comb uniform 1/4.
  HostTensor r = bf16({1, 4, 8}, randn(32, 301));
  MhcBigFuseResult z =
      mhc_pre_big_fuse_ref(r, fn, scale, base, 1e-6f, 0.0f, 1e-6f, 1.0f, 10);
  for (double v : values(z.post_mix))
    CHECK(v == 0.5);
  for (double v : values(z.comb_mix))
    CHECK(v == Approx(0.25).epsilon(1e-5));
  Vec li = values(z.layer_input), rv = values(r);
  for (int h = 0; h < 8; ++h)
    CHECK(li[h] == Approx(0.5 * (rv[h] + rv[8 + h] + rv[16 + h] + rv[24 + h]))
                       .epsilon(1e-2)
                       .margin(1e-6));
}

TEST_CASE("mhc_pre_big_fuse rejects bad arguments", "[ref][mhc]") {
  HostTensor r = HostTensor::zeros(DType::bf16, {2, 4, 8});
  HostTensor fn = HostTensor::zeros(DType::f32, {24, 32});
  HostTensor scale = HostTensor::zeros(DType::f32, {3});
  HostTensor base = HostTensor::zeros(DType::f32, {24});
  // No Sinkhorn step.
  CHECK_USER_ERROR(
      mhc_pre_big_fuse_ref(r, fn, scale, base, 1e-6f, 1e-6f, 1e-6f, 1.0f, 0),
      "mhc_pre_big_fuse_ref: argument 'sinkhorn_repeat' is 0; "
      "requires >= 1");
  CHECK_USER_ERROR(mhc_pre_big_fuse_ref(r, fn, scale, base, 1e-6f, 1e-6f, 1e-6f,
                                        1.0f, 10, -2),
                   "mhc_pre_big_fuse_ref: argument 'n_splits' is -2; requires "
                   ">= 1");
  // fn of the transposed shape.
  CHECK_USER_ERROR(
      mhc_pre_big_fuse_ref(r, HostTensor::zeros(DType::f32, {32, 24}), scale,
                           base, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10),
      "mhc_pre_big_fuse_ref: argument 'fn' has shape [32, 24]; requires [24, "
      "32]");
  // Eight streams.
  CHECK_USER_ERROR(
      mhc_pre_big_fuse_ref(HostTensor::zeros(DType::bf16, {2, 8, 4}), fn, scale,
                           base, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10),
      "mhc_pre_big_fuse_ref: argument 'residual' has shape [2, 8, 4] (mhc = "
      "8); requires 1 <= mhc <= 4");
  CHECK_USER_ERROR(
      mhc_pre_big_fuse_ref(r, fn, base, base, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10),
      "mhc_pre_big_fuse_ref: argument 'mhc_scale' has shape [24]; "
      "requires [3]");
}

TEST_CASE("2.1's mhc_pre_big_fuse_fwd from one split's partials is 1.0's "
          "fused result; zero splits add nothing",
          "[ref][mhc]") {
  const int64_t t = 5, mhc = 4, hid = 16, mhc3 = 24;
  HostTensor residual = bf16({t, mhc, hid}, randn(t * mhc * hid, 901));
  HostTensor fn = f32({mhc3, mhc * hid}, randn(mhc3 * mhc * hid, 902, 0.1));
  HostTensor scale = f32({3}, randn(3, 903, 0.1));
  HostTensor base = f32({mhc3}, randn(mhc3, 904, 0.1));
  MhcPreNormFnResult norm =
      mhc_pre_norm_fn_ref(residual, fn, std::nullopt, 1e-6f, false, 1);
  MhcBigFuseResult want = mhc_pre_big_fuse_ref(residual, fn, scale, base, 1e-6f,
                                               1e-6f, 1e-6f, 1.0f, 10, 16);
  const Vec mul = values(norm.mul), sq = values(norm.sq);
  MhcBigFuseResult one =
      mhc_pre_big_fuse_fwd_ref(f32({1, t, mhc3}, mul), f32({1, t}, sq), scale,
                               base, residual, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10);
  // 1.0's rsqrt is taken in float64, 2.1's in f32: within an ulp or two.
  auto close = [](const HostTensor &a, const HostTensor &b, double rtol) {
    const Vec x = values(a), y = values(b);
    REQUIRE(x.size() == y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      INFO(i << ": " << x[i] << " vs " << y[i]);
      CHECK(std::abs(x[i] - y[i]) <= rtol * std::abs(y[i]) + 1e-7);
    }
  };
  CHECK(one.post_mix.shape() == Shape{t, mhc});
  CHECK(one.comb_mix.shape() == Shape{t, mhc * mhc});
  CHECK(one.layer_input.shape() == Shape{t, hid});
  close(one.post_mix, want.post_mix, 1e-6);
  close(one.comb_mix, want.comb_mix, 1e-5);
  close(one.layer_input, want.layer_input, 0x1p-7);
  // Three splits, the first the whole product and the others zeros.
  Vec mul3(3 * mul.size(), 0.0), sq3(3 * sq.size(), 0.0);
  std::copy(mul.begin(), mul.end(), mul3.begin());
  std::copy(sq.begin(), sq.end(), sq3.begin());
  MhcBigFuseResult three =
      mhc_pre_big_fuse_fwd_ref(f32({3, t, mhc3}, mul3), f32({3, t}, sq3), scale,
                               base, residual, 1e-6f, 1e-6f, 1e-6f, 1.0f, 10);
  CHECK(compare_exact(three.post_mix, one.post_mix) == "");
  CHECK(compare_exact(three.comb_mix, one.comb_mix) == "");
  CHECK(compare_exact(three.layer_input, one.layer_input) == "");
}
