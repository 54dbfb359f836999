// norm_test.cpp - TileKernels 2.1's RMSNorm references (tk21_ops.md §3.10,
// §3.11): hand-computed rows, the residual rounded to x's dtype, 3-D input,
// the quantized form against per_token_cast of the output, the backward
// against finite differences of the forward, and the argument messages.
#include "test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace quant_test;

namespace {

/// A (H,) tensor of `v` (bf16: rounded to nearest even).
HostTensor row_vector(DType dtype, const std::vector<float> &v) {
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  if (dtype == DType::f32)
    return HostTensor::from(DType::f32, shape, v);
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    bits[i] = tilejit::ref::f32_to_bf16(v[i]);
  return HostTensor::from(DType::bf16, shape, bits);
}

} // namespace

TEST_CASE("norm_forward normalises each row by its root mean square",
          "[ref][quant]") {
  // One row of 16: 3, 4 and zeros: mean square 25 / 16, rstd 0.8.
  std::vector<float> v(16, 0.0f);
  v[0] = 3;
  v[1] = 4;
  HostTensor x = f32(1, 16, v);
  std::vector<float> w(16, 1.0f);
  w[1] = 0.5f;
  NormForwardResult r =
      norm_forward_ref(x, row_vector(DType::f32, w), 0.0f, std::nullopt, 2.0f);
  CHECK(r.rstd.data<float>()[0] == 1.0f / std::sqrt(25.0f / 16.0f));
  const float rstd = r.rstd.data<float>()[0];
  CHECK(get(r.out, 0, 0) == (3.0f * rstd) * (1.0f * 2.0f));
  CHECK(get(r.out, 0, 1) == (4.0f * rstd) * (0.5f * 2.0f));
  CHECK(get(r.out, 0, 2) == 0.0f);
  // Without residual the norm input is x; eps enters under the root.
  CHECK(get(r.norm_input, 0, 1) == 4.0f);
  NormForwardResult e = norm_forward_ref(x, std::nullopt, 1.0f);
  CHECK(e.rstd.data<float>()[0] == 1.0f / std::sqrt(25.0f / 16.0f + 1.0f));
}

TEST_CASE("norm_forward adds the residual in x's dtype and takes 3-D input",
          "[ref][quant]") {
  // bf16: 1 + 2^-9 is not a bf16; the sum is rounded before the norm.
  std::vector<float> xs(32, 1.0f), rs(32, std::ldexp(1.0f, -9));
  HostTensor x = bf16(2, 16, xs), res = bf16(2, 16, rs);
  NormForwardResult r = norm_forward_ref(x, std::nullopt, 0.0f, res);
  CHECK(get(r.norm_input, 0, 0) == 1.0f); // RNE to even
  CHECK(r.rstd.data<float>()[1] == 1.0f);
  CHECK(get(r.out, 1, 15) == 1.0f);
  // (B, T, H): rstd is (B, T).
  HostTensor x3 = HostTensor::zeros(DType::f32, {2, 3, 16});
  for (int64_t i = 0; i < x3.numel(); ++i)
    x3.data<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  NormForwardResult r3 = norm_forward_ref(x3, std::nullopt, 1e-6f);
  CHECK(r3.rstd.shape() == std::vector<int64_t>{2, 3});
  CHECK(r3.out.shape() == x3.shape());
}

TEST_CASE("norm_forward_and_per_token_cast is per_token_cast of the "
          "normalised rows",
          "[ref][quant]") {
  HostTensor x = randn(DType::bf16, 4, 64, 7);
  HostTensor w = row_vector(DType::bf16, std::vector<float>(64, 1.5f));
  NormForwardResult plain = norm_forward_ref(x, w, 1e-6f);
  for (bool col : {false, true}) {
    NormForwardCastResult q = norm_forward_and_per_token_cast_ref(
        x, w, 1e-6f, "e4m3", 32, std::nullopt, 1.0f, col, col, col, true);
    QuantTensor want =
        per_token_cast_ref(plain.out, "e4m3", 32, std::nullopt, col, col, col);
    CHECK(tilejit::ref::compare_exact(q.out.data, want.data) == "");
    CHECK(tilejit::ref::compare_exact(q.out.sf, want.sf) == "");
    // bf16 x: the bf16 copy is the output itself.
    CHECK(tilejit::ref::compare_exact(q.out_bf16, plain.out) == "");
  }
  CHECK_THROWS_WITH(
      norm_forward_and_per_token_cast_ref(x, w, 1e-6f, "e4m3", 128),
      "norm_forward_and_per_token_cast_ref: arguments 'fmt' and "
      "'num_per_channels' are 'e4m3' and 128; requires 'e4m3' and 32");
}

TEST_CASE("norm_backward is the derivative of norm_forward", "[ref][quant]") {
  // f32 rows of 32; loss L = sum(out_grad * out): dL/dx and dL/dweight
  // against central differences of norm_forward in float64 terms.
  const int64_t h = 32;
  HostTensor x = randn(DType::f32, 2, h, 3);
  HostTensor g = randn(DType::f32, 2, h, 4);
  HostTensor w = row_vector(DType::f32, std::vector<float>(h, 0.75f));
  w.data<float>()[5] = -1.25f;
  const float eps = 1e-5f, scale = 1.5f;
  NormForwardResult f = norm_forward_ref(x, w, eps, std::nullopt, scale);
  NormBackwardResult b =
      norm_backward_ref(g, x, w, f.rstd, std::nullopt, scale);
  auto loss = [&](const HostTensor &xx, const HostTensor &ww) {
    NormForwardResult o = norm_forward_ref(xx, ww, eps, std::nullopt, scale);
    double l = 0;
    for (int64_t i = 0; i < o.out.numel(); ++i)
      l += static_cast<double>(o.out.data<float>()[i]) * g.data<float>()[i];
    return l;
  };
  const float step = 1e-2f;
  for (int64_t i : {0, 7, 40, 63}) {
    HostTensor up =
        f32(2, h, std::vector<float>(x.data<float>(), x.data<float>() + 2 * h));
    HostTensor down =
        f32(2, h, std::vector<float>(x.data<float>(), x.data<float>() + 2 * h));
    up.data<float>()[i] += step;
    down.data<float>()[i] -= step;
    const double numeric = (loss(up, w) - loss(down, w)) / (2.0 * step);
    CHECK(b.x_grad.data<float>()[i] ==
          Approx(numeric).epsilon(2e-2).margin(2e-3));
  }
  for (int64_t j : {0, 5, 31}) {
    HostTensor up = row_vector(
        DType::f32, std::vector<float>(w.data<float>(), w.data<float>() + h));
    HostTensor down = row_vector(
        DType::f32, std::vector<float>(w.data<float>(), w.data<float>() + h));
    up.data<float>()[j] += step;
    down.data<float>()[j] -= step;
    // The kernel's weight_grad is sum(xh * go) (go = out_grad * out_scale,
    // the weight not scaled by out_scale): dL/dw = that.
    const double numeric = (loss(x, up) - loss(x, down)) / (2.0 * step);
    CHECK(b.weight_grad.data<float>()[j] ==
          Approx(numeric).epsilon(2e-2).margin(2e-3));
  }
  // residual_out_grad is added; a given weight_grad is accumulated into.
  HostTensor extra = randn(DType::f32, 2, h, 5);
  HostTensor acc = row_vector(DType::f32, std::vector<float>(h, 10.0f));
  NormBackwardResult b2 = norm_backward_ref(g, x, w, f.rstd, extra, scale, acc);
  CHECK(b2.x_grad.data<float>()[3] ==
        b.x_grad.data<float>()[3] + extra.data<float>()[3]);
  CHECK(acc.data<float>()[0] == 10.0f + b.weight_grad.data<float>()[0]);
}

TEST_CASE("the RMSNorm references name every bad argument", "[ref][quant]") {
  HostTensor x = f32(2, 16, std::vector<float>(32, 1.0f));
  HostTensor odd = f32(2, 24, std::vector<float>(48, 1.0f));
  CHECK_THROWS_WITH(
      norm_forward_ref(odd, std::nullopt, 0.0f),
      "norm_forward_ref: argument 'x' has rows of 24; requires 1 to 8192 "
      "elements, a multiple of 16");
  CHECK_THROWS_WITH(
      norm_forward_ref(x, row_vector(DType::bf16, std::vector<float>(16, 1)),
                       0.0f),
      "norm_forward_ref: argument 'weight' is bf16[16]; requires "
      "f32[16] (x's dtype, a value a column)");
  CHECK_THROWS_WITH(
      norm_forward_ref(x, std::nullopt, 0.0f,
                       f32(1, 16, std::vector<float>(16, 0.0f))),
      "norm_forward_ref: argument 'residual' is f32[1, 16]; requires "
      "x's f32[2, 16]");
  HostTensor x1 = HostTensor::zeros(DType::f32, {16});
  CHECK_THROWS_WITH(
      norm_forward_ref(x1, std::nullopt, 0.0f),
      "norm_forward_ref: argument 'x' has shape [16]; requires (T, H) or "
      "(B, T, H)");
  HostTensor rstd = HostTensor::zeros(DType::f32, {2});
  CHECK_THROWS_WITH(
      norm_backward_ref(x, x, std::nullopt, rstd),
      "norm_backward_ref: argument 'x' has rows of 16; requires 1 to 8192 "
      "elements, a multiple of 32");
  HostTensor x32 = f32(2, 32, std::vector<float>(64, 1.0f));
  CHECK_THROWS_WITH(
      norm_backward_ref(x32, x32, std::nullopt,
                        HostTensor::zeros(DType::f32, {3})),
      "norm_backward_ref: argument 'rstd' is f32[3]; requires f32[2] "
      "(a value a row of x)");
  CHECK_THROWS_WITH(
      norm_backward_ref(x32, x32, std::nullopt, rstd, std::nullopt, 1.0f,
                        HostTensor::zeros(DType::f32, {32})),
      "norm_backward_ref: argument 'weight_grad' is given without "
      "'weight'; requires both");
}
