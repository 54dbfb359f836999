// mhc_pre_apply_mix_test.cpp - Tests of the mhc_pre_apply_mix reference
// (spec §3.5): the fma chain and its order, backward by hand and against
// finite differences, the shared gradient buffer, edges and errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("mhc_pre_apply_mix is an fp32 fma chain from stream 0",
          "[ref][mhc]") {
  const double e7 = std::ldexp(1.0, -7), e23 = std::ldexp(1.0, -23);
  // Stream 0: acc = -(1 + 2^-7). Stream 1: fma((1 + 2^-23), (1 + 2^-7), acc)
  // keeps the 2^-30 term a rounded product would lose: 2^-23 (1 + 2^-7),
  // which bf16 holds exactly.
  HostTensor x = bf16({1, 2, 1}, {1 + e7, 1 + e7});
  HostTensor mix = f32({1, 2, 1}, {-1, 1 + e23});
  CHECK(values(mhc_pre_apply_mix_ref(x, mix))[0] == e23 * (1 + e7));
  // Order: 2^24 + 1 - 2^24 is 0 in fp32 (ties to even), 1 in reverse.
  const double big = std::ldexp(1.0, 24);
  HostTensor x4 = bf16({1, 4, 1}, {big, 1, big, 7});
  HostTensor m4 = f32({1, 4, 1}, {1, 1, -1, 0});
  CHECK(values(mhc_pre_apply_mix_ref(x4, m4))[0] == 0);
  // Result rounded once to bf16 (RNE): 1 + 2^-8 + 2^-9 -> 1 + 2^-7.
  HostTensor x2 = bf16({1, 2, 1}, {1, std::ldexp(1.0, -8)});
  HostTensor m2 = f32({1, 2, 1}, {1, 1.5});
  CHECK(values(mhc_pre_apply_mix_ref(x2, m2))[0] == 1 + e7);
}

TEST_CASE("mhc_pre_apply_mix backward by hand and with a buffer",
          "[ref][mhc]") {
  // mhc 2, H 2: x = [[3, 4], [1, -2]], mix = [0.5, 2], o_grad = [1, 2].
  HostTensor x = bf16({1, 2, 2}, {3, 4, 1, -2});
  HostTensor mix = f32({1, 2, 1}, {0.5, 2});
  HostTensor og = bf16({1, 2}, {1, 2});
  MhcPreApplyMixGrads g = mhc_pre_apply_mix_bwd_ref(og, x, mix);
  CHECK(values(g.mix_grad) == Vec{3 + 8, 1 - 4});
  REQUIRE(g.x_grad.has_value());
  CHECK(values(*g.x_grad) == Vec{0.5, 1, 2, 4});
  // With a buffer: x_grad = bf16(fma(mix, o_grad, buf)) in place, None back.
  HostTensor buf = bf16({1, 2, 2}, {10, 20, 30, std::ldexp(1.0, 10)});
  MhcPreApplyMixGrads f = mhc_pre_apply_mix_bwd_ref(og, x, mix, buf);
  CHECK_FALSE(f.x_grad.has_value());
  CHECK(compare_exact(f.mix_grad, g.mix_grad) == "");
  // 1024 + 4 = 1028 is not a bf16 (step 8 there): rounds to 1024.
  CHECK(values(buf) == Vec{10.5, 21, 32, 1024});
}

TEST_CASE("mhc_pre_apply_mix backward matches finite differences",
          "[ref][mhc]") {
  const int64_t n = 3, mhc = 4, hid = 5;
  Vec xv = to_bf16(randn(n * mhc * hid, 131));
  Vec mv = to_f32(randn(n * mhc, 132, 0.5));
  Vec c = to_bf16(randn(n * hid, 133));
  HostTensor x = bf16({n, mhc, hid}, xv), mix = f32({n, mhc, 1}, mv);
  MhcPreApplyMixGrads g = mhc_pre_apply_mix_bwd_ref(bf16({n, hid}, c), x, mix);
  check_gradient(
      "x", xv,
      [&](const Vec &v) { return dot(c, apply64(v, mv, n, mhc, hid)); },
      values(*g.x_grad), 1e-2, 1e-2);
  check_gradient(
      "mix", mv,
      [&](const Vec &v) { return dot(c, apply64(xv, v, n, mhc, hid)); },
      values(g.mix_grad), 1e-5, 1e-6);
}

TEST_CASE("mhc_pre_apply_mix edges", "[ref][mhc]") {
  HostTensor x0 = HostTensor::zeros(DType::bf16, {0, 4, 8});
  HostTensor m0 = HostTensor::zeros(DType::f32, {0, 4, 1});
  CHECK(mhc_pre_apply_mix_ref(x0, m0).shape() == Shape{0, 8});
  CHECK(
      mhc_pre_apply_mix_bwd_ref(HostTensor::zeros(DType::bf16, {0, 8}), x0, m0)
          .mix_grad.shape() == Shape{0, 4, 1});
  // One stream, H = 1, into a given out.
  HostTensor out = HostTensor::zeros(DType::bf16, {1});
  HostTensor r =
      mhc_pre_apply_mix_ref(bf16({1, 1}, {3}), f32({1, 1}, {0.5}), out);
  CHECK(r.raw() == out.raw());
  CHECK(values(out) == Vec{1.5});
  // H = 0: empty output, zero mix gradient.
  HostTensor xe = HostTensor::zeros(DType::bf16, {2, 4, 0});
  HostTensor me = f32({2, 4, 1}, Vec(8, 1.0));
  CHECK(max_abs(values(mhc_pre_apply_mix_bwd_ref(
                           HostTensor::zeros(DType::bf16, {2, 0}), xe, me)
                           .mix_grad)) == 0);
  // inf in a stream with weight 0 gives NaN (0 * inf), as on the device.
  const double inf = std::numeric_limits<double>::infinity();
  Vec o = values(
      mhc_pre_apply_mix_ref(bf16({1, 2, 1}, {inf, 1}), f32({1, 2, 1}, {0, 1})));
  CHECK(std::isnan(o[0]));
}

TEST_CASE("mhc_pre_apply_mix rejects bad arguments", "[ref][mhc]") {
  HostTensor x = HostTensor::zeros(DType::bf16, {2, 4, 8});
  HostTensor mix = HostTensor::zeros(DType::f32, {2, 4, 1});
  // mix without the trailing 1.
  CHECK_USER_ERROR(
      mhc_pre_apply_mix_ref(x, HostTensor::zeros(DType::f32, {2, 4})),
      "mhc_pre_apply_mix_ref: argument 'mix' has shape [2, 4]; requires [2, "
      "4, 1]");
  // fp32 streams.
  CHECK_USER_ERROR(
      mhc_pre_apply_mix_ref(HostTensor::zeros(DType::f32, {2, 4, 8}), mix),
      "mhc_pre_apply_mix_ref: argument 'x' has dtype f32; requires bf16");
  // A vector of streams.
  CHECK_USER_ERROR(
      mhc_pre_apply_mix_ref(HostTensor::zeros(DType::bf16, {8}), mix),
      "mhc_pre_apply_mix_ref: argument 'x' has shape [8]; requires shape "
      "(..., mhc, H)");
  // out of the residual's shape.
  CHECK_USER_ERROR(
      mhc_pre_apply_mix_ref(x, mix, HostTensor::zeros(DType::bf16, {2, 4, 8})),
      "mhc_pre_apply_mix_ref: argument 'out' has shape [2, 4, "
      "8]; requires [2, 8]");
  // fp32 output gradient.
  CHECK_USER_ERROR(
      mhc_pre_apply_mix_bwd_ref(HostTensor::zeros(DType::f32, {2, 8}), x, mix),
      "mhc_pre_apply_mix_bwd_ref: argument 'out_grad' has dtype f32; requires "
      "bf16");
  CHECK_USER_ERROR(
      mhc_pre_apply_mix_bwd_ref(HostTensor::zeros(DType::bf16, {2, 8}), x, mix,
                                HostTensor::zeros(DType::bf16, {2, 8})),
      "mhc_pre_apply_mix_bwd_ref: argument 'x_grad_buf' has shape [2, 8]; "
      "requires [2, 4, 8]");
}
