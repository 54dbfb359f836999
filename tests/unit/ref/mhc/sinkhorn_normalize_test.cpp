// sinkhorn_normalize_test.cpp - Tests of the Sinkhorn reference (spec §3.2):
// step order and eps placement by hand, doubly-stochastic output, the
// backward against finite differences, edges and argument errors.
#include "mhc/reference.h"
#include "mhc_test_util.h"

#include <limits>

using namespace mhc_test;
using namespace tilejit::mhc;

TEST_CASE("sinkhorn_normalize follows the step order and eps placement",
          "[ref][mhc]") {
  // Row softmax of [[0, ln 3], [0, 0]] is [[1/4, 3/4], [1/2, 1/2]]; eps 1/4.
  HostTensor x = f32({1, 2, 2}, {0, std::log(3.0), 0, 0});
  // repeat 1: + eps -> [[1/2, 1], [3/4, 3/4]], column sums 5/4 and 7/4,
  // divided by (sum + eps) = 3/2 and 2.
  Vec y1 = values(sinkhorn_normalize_ref(x, 1, 0.25f));
  const Vec want1 = {1.0 / 3, 1.0 / 2, 1.0 / 2, 3.0 / 8};
  // repeat 2: then rows (sums 5/6, 7/8; divisors 13/12, 9/8), then columns
  // (sums 88/117, 31/39; divisors 469/468, 163/156).
  Vec y2 = values(sinkhorn_normalize_ref(x, 2, 0.25f));
  const Vec want2 = {144.0 / 469, 72.0 / 163, 208.0 / 469, 52.0 / 163};
  for (int i = 0; i < 4; ++i) {
    CHECK(y1[i] == Approx(want1[i]).epsilon(1e-6));
    CHECK(y2[i] == Approx(want2[i]).epsilon(1e-6));
  }
}

TEST_CASE("sinkhorn_normalize output is near doubly stochastic", "[ref][mhc]") {
  const int batch = 256, n = 4;
  Vec xv = randn(batch * n * n, 11);
  Vec y = values(sinkhorn_normalize_ref(f32({batch, n, n}, xv)));
  double worst_col = 0, worst_row = 0;
  for (int b = 0; b < batch; ++b)
    for (int a = 0; a < n; ++a) {
      double rs = 0, cs = 0;
      for (int c = 0; c < n; ++c) {
        rs += y[b * n * n + a * n + c];
        cs += y[b * n * n + c * n + a];
        CHECK(y[b * n * n + a * n + c] > 0);
      }
      worst_row = std::max(worst_row, std::abs(rs - 1));
      worst_col = std::max(worst_col, std::abs(cs - 1));
    }
  INFO("worst row sum error " << worst_row << ", column " << worst_col);
  CHECK(worst_col < 1e-5); // the last step normalises columns
  CHECK(worst_row < 1e-2); // 9 row steps leave slowly converging rows
}

TEST_CASE("sinkhorn_normalize matches a float64 forward", "[ref][mhc]") {
  for (auto [n, repeat, eps] :
       {std::tuple{4, 10, 1e-6f}, std::tuple{3, 3, 0.1f},
        std::tuple{1, 2, 1e-6f}, std::tuple{5, 1, 1e-3f}}) {
    Vec xv = to_f32(randn(7 * n * n, 12 + n, 2.0));
    Vec y = values(sinkhorn_normalize_ref(f32({7, n, n}, xv), repeat, eps));
    Vec want = sinkhorn64(xv, n, repeat, eps);
    for (size_t i = 0; i < y.size(); ++i)
      CHECK(std::abs(y[i] - want[i]) <= 1e-5 + 1.3e-6 * std::abs(want[i]));
  }
}

TEST_CASE("sinkhorn_normalize backward matches finite differences",
          "[ref][mhc]") {
  for (auto [n, repeat, eps] :
       {std::tuple{4, 10, 1e-6f}, std::tuple{3, 3, 0.25f},
        std::tuple{4, 1, 0.1f}, std::tuple{2, 2, 1e-6f}}) {
    const int batch = 3;
    Vec xv = to_f32(randn(batch * n * n, 21 + n + repeat));
    Vec c = to_f32(randn(batch * n * n, 31 + n + repeat));
    Shape shape{batch, n, n};
    Vec g = values(
        sinkhorn_normalize_bwd_ref(f32(shape, c), f32(shape, xv), repeat, eps));
    double eps64 = eps;
    int nn = n, rr = repeat;
    check_gradient(
        "x", xv,
        [&](const Vec &v) { return dot(c, sinkhorn64(v, nn, rr, eps64)); }, g,
        1e-3, 1e-4);
  }
}

TEST_CASE("sinkhorn_normalize accepts strided input and edge values",
          "[ref][mhc]") {
  Vec xv = to_f32(randn(2 * 4 * 4, 41));
  HostTensor x = f32({2, 4, 4}, xv);
  HostTensor xt = x.transposed(1, 2); // made contiguous by the op
  CHECK(compare_exact(sinkhorn_normalize_ref(xt),
                      sinkhorn_normalize_ref(xt.clone())) == "");
  CHECK(compare_exact(sinkhorn_normalize_bwd_ref(xt, xt),
                      sinkhorn_normalize_bwd_ref(xt.clone(), xt.clone())) ==
        "");
  // Zero logits: every entry (1/n + eps) scaled alike, so 1/n up to eps.
  Vec z =
      values(sinkhorn_normalize_ref(HostTensor::zeros(DType::f32, {1, 4, 4})));
  for (double v : z)
    CHECK(v == Approx(0.25).epsilon(1e-5));
  // Huge logits: the row max is subtracted before exp, so no overflow.
  const float inf = std::numeric_limits<float>::infinity();
  Vec big_in = {1e30, -1e30, 0, 0};
  Vec big = values(sinkhorn_normalize_ref(f32({1, 2, 2}, big_in)));
  Vec big_want = sinkhorn64(to_f32(big_in), 2, 10, 1e-6f);
  for (int i = 0; i < 4; ++i) {
    CHECK(std::isfinite(big[i]));
    CHECK(big[i] == Approx(big_want[i]).margin(1e-5));
  }
  // -inf logits get weight 0 from the softmax, then eps.
  Vec masked =
      values(sinkhorn_normalize_ref(f32({1, 2, 2}, {0, -inf, 0, 0}), 1, 0.0f));
  CHECK(masked[1] == 0);
  CHECK(masked[0] == Approx(2.0 / 3));
  // Size 1 and empty batches.
  Vec one = values(sinkhorn_normalize_ref(f32({1, 1}, {5}), 10, 0.0f));
  CHECK(one[0] == 1);
  CHECK(sinkhorn_normalize_ref(HostTensor::zeros(DType::f32, {0, 4, 4}))
            .numel() == 0);
  CHECK(sinkhorn_normalize_bwd_ref(HostTensor::zeros(DType::f32, {0, 4, 4}),
                                   HostTensor::zeros(DType::f32, {0, 4, 4}))
            .numel() == 0);
}

TEST_CASE("sinkhorn_normalize rejects bad arguments", "[ref][mhc]") {
  HostTensor x = HostTensor::zeros(DType::f32, {2, 4, 4});
  // bf16 input.
  CHECK_USER_ERROR(
      sinkhorn_normalize_ref(HostTensor::zeros(DType::bf16, {4, 4})),
      "sinkhorn_normalize_ref: argument 'x' has dtype bf16; requires f32");
  // Not square.
  CHECK_USER_ERROR(
      sinkhorn_normalize_ref(HostTensor::zeros(DType::f32, {2, 3})),
      "sinkhorn_normalize_ref: argument 'x' has shape [2, 3]; requires shape "
      "(..., n, n)");
  // A vector.
  CHECK_USER_ERROR(sinkhorn_normalize_ref(HostTensor::zeros(DType::f32, {4})),
                   "sinkhorn_normalize_ref: argument 'x' has shape [4]; "
                   "requires shape (..., n, n)");
  // No step at all.
  CHECK_USER_ERROR(sinkhorn_normalize_ref(x, 0),
                   "sinkhorn_normalize_ref: argument 'repeat' is 0; requires "
                   ">= 1");
  CHECK_USER_ERROR(sinkhorn_normalize_bwd_ref(x, x, -1),
                   "sinkhorn_normalize_bwd_ref: argument 'repeat' is -1; "
                   "requires >= 1");
  // Gradient of another shape.
  CHECK_USER_ERROR(
      sinkhorn_normalize_bwd_ref(HostTensor::zeros(DType::f32, {1, 4, 4}), x),
      "sinkhorn_normalize_bwd_ref: argument 'grad_output' has shape [1, 4, "
      "4]; requires [2, 4, 4]");
}
