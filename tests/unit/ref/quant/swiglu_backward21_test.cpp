// swiglu_backward21_test.cpp - TileKernels 2.1's plain swiglu_backward
// (tk21_ops §3.9): the psum padding rows, the gradients against the
// analytic derivative, act_out and weight_grad, the clamp's zeros, rows
// past the experts computed, and the argument checks.
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace quant_test;

namespace {

HostTensor i32(std::vector<int32_t> v) {
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  return HostTensor::from(DType::i32, shape, v);
}

} // namespace

TEST_CASE("psum_padding_rows: before each aligned start, after the last",
          "[ref][quant]") {
  // Experts end at 3, 3 and 300, alignment 128: padding [3, 128) (after
  // experts 0 and 1) and [300, 384) (after the last); 384 on is computed.
  const std::vector<bool> p = psum_padding_rows(i32({3, 3, 300}), 400, 128);
  for (int64_t r = 0; r < 400; ++r) {
    INFO("row " << r);
    CHECK(p[r] == ((r >= 3 && r < 128) || (r >= 300 && r < 384)));
  }
  CHECK(psum_padding_rows(std::nullopt, 3) == std::vector<bool>(3, false));
  CHECK_THROWS_WITH(psum_padding_rows(i32({4, 2}), 8),
                    "psum_padding_rows: psum_num_tokens_per_expert[1] is 2, "
                    "below the previous 4; requires a non-decreasing prefix "
                    "sum");
}

TEST_CASE("swiglu_backward (2.1): gradients, act_out, weight_grad, clamp",
          "[ref][quant]") {
  const int64_t T = 6, H = 64;
  const HostTensor x = randn(DType::f32, T, 2 * H, 11, 2.0f);
  const HostTensor g = randn(DType::f32, T, H, 12);
  const int64_t sT[] = {T};
  const HostTensor w = HostTensor::from(
      DType::f32, sT, std::vector<float>{0.5f, 1.5f, 0.25f, 2.0f, 1.0f, 0.75f});
  const float rsf = 1.5f, c = 2.5f;
  // psum {2} with alignment 4: row 0..1 expert 0, rows 2..3 padding, rows
  // 4..5 past the experts (computed).
  const auto r =
      swiglu_backward_ref(x, g, "fp32", i32({2}), w, rsf, c, true, 4);
  REQUIRE(r.x_grad.shape() == shape_t{T, 2 * H});
  REQUIRE(r.weight_grad.shape() == shape_t{T});
  REQUIRE(r.act_out.shape() == shape_t{T, H});
  int clamped_l = 0, clamped_r = 0;
  for (int64_t t = 0; t < T; ++t) {
    const bool padding = t == 2 || t == 3;
    const double wt = double{w.data<float>()[t]} * rsf;
    double wg = 0;
    for (int64_t j = 0; j < H; ++j) {
      INFO("row " << t << ", column " << j);
      const double l0 = get(x, t, j), r0 = get(x, t, H + j);
      const double l = std::min(l0, double{c}),
                   rr = std::max(std::min(r0, double{c}), -double{c});
      const double s = 1 / (1 + std::exp(-l)), gg = get(g, t, j);
      const double dl = gg * wt * rr * s * (1 + l * (1 - s));
      const double dr = gg * wt * l * s;
      const double act = l * s * rr;
      wg += gg * act;
      if (padding) {
        CHECK(get(r.x_grad, t, j) == 0.0f);
        CHECK(get(r.x_grad, t, H + j) == 0.0f);
        CHECK(get(r.act_out, t, j) == 0.0f);
        continue;
      }
      if (l0 > c) {
        ++clamped_l;
        CHECK(bits(get(r.x_grad, t, j)) == 0u); // +0
      } else {
        CHECK(get(r.x_grad, t, j) == Approx(dl).epsilon(1e-5).margin(1e-6));
      }
      if (std::fabs(r0) > c) {
        ++clamped_r;
        CHECK(bits(get(r.x_grad, t, H + j)) == 0u);
      } else {
        CHECK(get(r.x_grad, t, H + j) == Approx(dr).epsilon(1e-5).margin(1e-6));
      }
      CHECK(get(r.act_out, t, j) ==
            Approx(act * wt).epsilon(1e-5).margin(1e-6));
    }
    INFO("weight_grad of row " << t);
    CHECK(r.weight_grad.data<float>()[t] ==
          Approx(padding ? 0.0 : rsf * wg).epsilon(1e-5).margin(1e-5));
  }
  CHECK(clamped_l > 0);
  CHECK(clamped_r > 0);

  // Without weights and recompute: no weight_grad or act_out, w = 1, and
  // bf16 out rounds the same f32 values.
  const auto b = swiglu_backward_ref(x, g, "fp32");
  CHECK(b.weight_grad.shape().empty());
  CHECK(b.act_out.shape().empty());
  const auto bb = swiglu_backward_ref(x, g, "bf16");
  for (int64_t j = 0; j < 2 * H; ++j)
    CHECK(bb.x_grad.at<uint16_t>({5, j}) ==
          tilejit::ref::f32_to_bf16(get(b.x_grad, 5, j)));
}

TEST_CASE("swiglu_backward (2.1): argument checks", "[ref][quant]") {
  const std::string fn = "swiglu_backward_ref: ";
  const HostTensor x = HostTensor::zeros(DType::bf16, {4, 256});
  const HostTensor g = HostTensor::zeros(DType::bf16, {4, 128});
  CHECK_THROWS_WITH(swiglu_backward_ref(x, g, "e4m3"),
                    fn + "argument 'fmt' is 'e4m3'; requires 'bf16' or "
                         "'fp32'");
  CHECK_THROWS_WITH(
      swiglu_backward_ref(x, HostTensor::zeros(DType::f32, {4, 128}), "bf16"),
      fn + "argument 'act_x_grad' has dtype f32; requires bf16");
  CHECK_THROWS_WITH(
      swiglu_backward_ref(x, HostTensor::zeros(DType::bf16, {4, 64}), "bf16"),
      fn + "argument 'act_x_grad' has shape [4, 64]; requires [4, 128]");
  CHECK_THROWS_WITH(
      swiglu_backward_ref(x, g, "bf16", std::nullopt, std::nullopt, 2.0f),
      fn + "argument 'routed_scaling_factor' is given while "
           "'topk_weights' is None; requires weights");
}
