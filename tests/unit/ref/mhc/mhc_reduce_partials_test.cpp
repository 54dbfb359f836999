// mhc_reduce_partials_test.cpp - TileKernels 2.1's
// mhc_reduce_partials_and_rmsnorm_fwd / _bwd references (tk21_ops.md §6.2):
// the splits added in order, the groups' FMAs, the backward against central
// differences of the forward, and the argument messages.
#include "mhc_test_util.h"

#include "mhc/reference.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("mhc_reduce_partials_and_rmsnorm_fwd adds the splits and "
          "normalises each group",
          "[ref][mhc]") {
  // 2 splits, 1 token, 2 groups, N3 = 3.
  const Vec mul = {1, 2, 3, 4, 5, 6, 0.5, 0.25, 0.125, -1, -2, -3};
  const Vec sq = {3, 5, 1, 3};
  HostTensor om = f32({2, 1, 2, 3}, mul), ss = f32({2, 1, 2}, sq);
  const int64_t group = 8;
  const float eps = 1e-6f;
  MhcReducePartialsResult r =
      mhc_reduce_partials_and_rmsnorm_fwd_ref(om, ss, group, eps);
  // sqrsum[0, k] = split 0 + split 1, in that order.
  CHECK(r.sqrsum.at<float>({0, 0}) == 3.0f + 1.0f);
  CHECK(r.sqrsum.at<float>({0, 1}) == 5.0f + 3.0f);
  for (int j = 0; j < 3; ++j) {
    const float m0 =
        static_cast<float>(mul[j]) + static_cast<float>(mul[6 + j]);
    const float m1 =
        static_cast<float>(mul[3 + j]) + static_cast<float>(mul[9 + j]);
    CHECK(r.out_mul.at<float>({0, 0, j}) == m0);
    const float r0 = 1.0f / std::sqrt(4.0f / 8.0f + eps);
    const float r1 = 1.0f / std::sqrt(8.0f / 8.0f + eps);
    CHECK(r.out.at<float>({0, j}) == std::fma(m1, r1, std::fma(m0, r0, 0.0f)));
  }
}

TEST_CASE("mhc_reduce_partials_and_rmsnorm_bwd is the derivative of the "
          "forward",
          "[ref][mhc]") {
  const int64_t t = 2, g = 2, n3 = 4, group = 16;
  const float eps = 1e-3f;
  const Vec mul = to_f32(randn(t * g * n3, 3));
  Vec sq = to_f32(randn(t * g, 4, 1.0, 6.0)); // positive sums of squares
  const Vec go = to_f32(randn(t * n3, 5));
  auto forward_loss = [&](const Vec &m, const Vec &s) {
    // One split: the partials are the sums themselves.
    MhcReducePartialsResult r = mhc_reduce_partials_and_rmsnorm_fwd_ref(
        f32({1, t, g, n3}, m), f32({1, t, g}, s), group, eps);
    return dot(values(r.out), go);
  };
  MhcReducePartialsGrads grads = mhc_reduce_partials_and_rmsnorm_bwd_ref(
      f32({t, n3}, go), f32({t, g, n3}, mul), f32({t, g}, sq), group, eps);
  const double h = 1e-2;
  for (size_t i : {0u, 5u, 15u}) {
    Vec up = mul, down = mul;
    up[i] += h;
    down[i] -= h;
    const double numeric =
        (forward_loss(up, sq) - forward_loss(down, sq)) / (2 * h);
    CHECK(values(grads.out_mul_grad)[i] ==
          Approx(numeric).epsilon(1e-2).margin(1e-3));
  }
  for (size_t i : {0u, 3u}) {
    Vec up = sq, down = sq;
    up[i] += h;
    down[i] -= h;
    const double numeric =
        (forward_loss(mul, up) - forward_loss(mul, down)) / (2 * h);
    CHECK(values(grads.sqrsum_grad)[i] ==
          Approx(numeric).epsilon(2e-2).margin(1e-3));
  }
}

TEST_CASE("mhc_reduce_partials_and_rmsnorm names every bad argument",
          "[ref][mhc]") {
  HostTensor om = HostTensor::zeros(DType::f32, {2, 3, 1, 4});
  HostTensor ss = HostTensor::zeros(DType::f32, {2, 3, 1});
  CHECK_THROWS_WITH(
      mhc_reduce_partials_and_rmsnorm_fwd_ref(
          om, HostTensor::zeros(DType::f32, {2, 3, 2}), 8, 0.0f),
      "mhc_reduce_partials_and_rmsnorm_fwd_ref: argument "
      "'sqrsum_splitted' has shape [2, 3, 2]; requires [2, 3, 1]");
  CHECK_THROWS_WITH(mhc_reduce_partials_and_rmsnorm_fwd_ref(om, ss, 0, 0.0f),
                    "mhc_reduce_partials_and_rmsnorm_fwd_ref: argument "
                    "'rms_group_size' is 0; requires >= 1 (the K elements of "
                    "a group)");
  CHECK_THROWS_WITH(
      mhc_reduce_partials_and_rmsnorm_fwd_ref(
          HostTensor::zeros(DType::f32, {3, 1, 4}), ss, 8, 0.0f),
      "mhc_reduce_partials_and_rmsnorm_fwd_ref: argument 'out_mul_splitted' "
      "has shape [3, 1, 4]; requires shape (n_splits, T, G, N3)");
  CHECK_THROWS_WITH(
      mhc_reduce_partials_and_rmsnorm_bwd_ref(
          HostTensor::zeros(DType::f32, {3, 5}),
          HostTensor::zeros(DType::f32, {3, 1, 4}),
          HostTensor::zeros(DType::f32, {3, 1}), 8, 0.0f),
      "mhc_reduce_partials_and_rmsnorm_bwd_ref: argument 'out_grad' has shape "
      "[3, 5]; requires [3, 4]");
}
