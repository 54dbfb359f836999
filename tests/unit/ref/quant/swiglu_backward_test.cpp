// swiglu_backward_test.cpp - swiglu_backward_and_per_token_cast (§11.2):
// gradients against float64 central differences, the FMA and product
// order pinned by searched inputs, clamping, weight_grad routing, checks.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <functional>

using namespace quant_test;

namespace {

using tilejit::ref::bf16_to_f32;
using tilejit::ref::e4m3_to_f32;
using tilejit::ref::f32_to_bf16;

HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) {
  return HostTensor::from(DType::i32, shape, v);
}

/// One row, H = 32, bk = 32, element 0 of gate and up set, weight w.
struct OneRow {
  QuantTensor x;
  HostTensor grad_out, weight, p2t, t2p;
};

OneRow one_row(uint8_t code_g, float sf_g, uint8_t code_u, float sf_u, float go,
               float w) {
  OneRow r;
  r.x.data = HostTensor::zeros(DType::e4m3, {1, 64});
  r.x.data.at<uint8_t>({0, 0}) = code_g;
  r.x.data.at<uint8_t>({0, 32}) = code_u;
  r.x.sf = f32(1, 2, {sf_g, sf_u});
  r.grad_out = bf16(1, 32, std::vector<float>(32, 0.0f));
  r.grad_out.at<uint16_t>({0, 0}) = f32_to_bf16(go);
  r.weight = f32(1, 1, {w});
  r.p2t = i32({1}, {0});
  r.t2p = i32({1, 1}, {0});
  return r;
}

/// The spec's per-element formulas (§11.2) without clamping.
struct Spec {
  float act, dg, du;
};
Spec spec(float g, float u, float go, float w) {
  const float t = 1.0f + std::exp(-g);
  const float act = (g / t) * u;
  const float s = 1.0f / t;
  const float gws = (go * w) * s;
  return {act, (gws * u) * std::fma(g, 1.0f - s, 1.0f), gws * g};
}

struct Found {
  uint8_t code_g, code_u;
  float sf_g, sf_u, go, w;
};

/// Random inputs until bf16(spec) and bf16(alt) of the chosen output differ.
Found search(const std::function<float(float, float, float, float)> &spec_out,
             const std::function<float(float, float, float, float)> &alt_out) {
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> code(0x08, 0x76);
  std::uniform_real_distribution<float> unit(0.5f, 2.0f);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 20000000; ++trial) {
    Found f;
    f.code_g = static_cast<uint8_t>(code(rng) | (rng() & 0x80));
    f.code_u = static_cast<uint8_t>(code(rng) | (rng() & 0x80));
    f.sf_g = unit(rng) / 64, f.sf_u = unit(rng) / 64;
    f.go = bf16_to_f32(f32_to_bf16(normal(rng)));
    f.w = unit(rng) / 2;
    const float g = e4m3_to_f32(f.code_g) * f.sf_g;
    const float u = e4m3_to_f32(f.code_u) * f.sf_u;
    if (f32_to_bf16(spec_out(g, u, f.go, f.w)) !=
        f32_to_bf16(alt_out(g, u, f.go, f.w)))
      return f;
  }
  FAIL("no discriminating input found");
  return {};
}

/// float64 forward of one element: go * w * act(clamped g, u).
double f64_loss(double g, double u, double go, double w,
                std::optional<double> C) {
  if (C) {
    g = std::min(g, *C);
    u = std::min(std::max(u, -*C), *C);
  }
  return go * w * (g / (1 + std::exp(-g))) * u;
}

} // namespace

TEST_CASE("swiglu backward: dg uses fma(g, 1 - s, 1), out is (g / t) * u * "
          "w",
          "[ref][quant]") {
  SECTION("the FMA") {
    const Found f =
        search([](float g, float u, float go,
                  float w) { return spec(g, u, go, w).dg; },
               [](float g, float u, float go, float w) {
                 const float t = 1.0f + std::exp(-g), s = 1.0f / t;
                 const float gws = (go * w) * s;
                 return (gws * u) * (g * (1.0f - s) + 1.0f); // two roundings
               });
    OneRow r = one_row(f.code_g, f.sf_g, f.code_u, f.sf_u, f.go, f.w);
    SwigluBackwardResult b = swiglu_backward_and_per_token_cast_ref(
        r.x, r.grad_out, r.weight, r.p2t, r.t2p, 32);
    const float g = e4m3_to_f32(f.code_g) * f.sf_g;
    const float u = e4m3_to_f32(f.code_u) * f.sf_u;
    CHECK(b.x_grad.at<uint16_t>({0, 0}) ==
          f32_to_bf16(spec(g, u, f.go, f.w).dg));
  }
  SECTION("gws = (go * w) * s") {
    const Found f = search([](float g, float u, float go,
                              float w) { return spec(g, u, go, w).du; },
                           [](float g, float, float go, float w) {
                             const float s = 1.0f / (1.0f + std::exp(-g));
                             return (go * (w * s)) * g;
                           });
    OneRow r = one_row(f.code_g, f.sf_g, f.code_u, f.sf_u, f.go, f.w);
    SwigluBackwardResult b = swiglu_backward_and_per_token_cast_ref(
        r.x, r.grad_out, r.weight, r.p2t, r.t2p, 32);
    const float g = e4m3_to_f32(f.code_g) * f.sf_g;
    const float u = e4m3_to_f32(f.code_u) * f.sf_u;
    CHECK(b.x_grad.at<uint16_t>({0, 32}) ==
          f32_to_bf16(spec(g, u, f.go, f.w).du));
  }
  SECTION("the activation order") {
    const Found f = search([](float g, float u, float,
                              float w) { return spec(g, u, 0, w).act * w; },
                           [](float g, float u, float, float w) {
                             return ((g * u) / (1.0f + std::exp(-g))) * w;
                           });
    OneRow r = one_row(f.code_g, f.sf_g, f.code_u, f.sf_u, f.go, f.w);
    SwigluBackwardResult b = swiglu_backward_and_per_token_cast_ref(
        r.x, r.grad_out, r.weight, r.p2t, r.t2p, 32);
    const float g = e4m3_to_f32(f.code_g) * f.sf_g;
    const float u = e4m3_to_f32(f.code_u) * f.sf_u;
    CHECK(b.out.at<uint16_t>({0, 0}) ==
          f32_to_bf16(spec(g, u, f.go, f.w).act * f.w));
  }
}

TEST_CASE("swiglu backward: gradients match float64 central differences",
          "[ref][quant]") {
  // E = 3 rows, H = 64, T = 2 tokens, k = 2; row 2 is padding.
  const int64_t E = 3, H = 64;
  HostTensor xr = randn(DType::bf16, E, 2 * H, 50, 2.0f);
  QuantTensor x = per_token_cast_ref(xr, "e4m3", 32); // non-rounded scales
  HostTensor go = randn(DType::bf16, E, H, 51);
  HostTensor weight = f32(2, 2, {0.3f, 0.9f, 0.7f, 0.1f});
  HostTensor p2t = i32({3}, {2, 0, -1});
  HostTensor t2p = i32({2, 2}, {1, -1, 0, -1});
  for (std::optional<float> C :
       {std::optional<float>{}, std::optional<float>{0.5f},
        std::optional<float>{10.0f}}) {
    for (bool round : {false, true}) {
      SwigluBackwardResult b = swiglu_backward_and_per_token_cast_ref(
          x, go, weight, p2t, t2p, 32, round, C);
      CHECK(b.out.shape() == shape_t{3, 64});
      CHECK(b.x_grad.shape() == shape_t{3, 128});
      CHECK(b.x_grad_fp8.data.shape() == shape_t{3, 128});
      CHECK(b.x_grad_fp8.sf.shape() == shape_t{3, 4});
      CHECK(b.x_grad_fp8.sf.strides() == shape_t{4, 1});
      CHECK(b.weight_grad.shape() == shape_t{2, 2});
      const float w_of_row[2] = {0.7f, 0.3f};
      const int64_t flat_of_row[2] = {2, 0};
      for (int64_t e = 0; e < 2; ++e) {
        const double w = w_of_row[e];
        double dw = 0;
        for (int64_t c = 0; c < H; ++c) {
          const double g = get(x.data, e, c) * get(x.sf, e, c / 32);
          const double u = get(x.data, e, H + c) * get(x.sf, e, (H + c) / 32);
          const double gov = get(go, e, c);
          const std::optional<double> Cd =
              C ? std::optional<double>{*C} : std::nullopt;
          const double h = 1e-6;
          if (C && (std::fabs(g - *C) < 2 * h || std::fabs(u - *C) < 2 * h ||
                    std::fabs(u + *C) < 2 * h))
            continue; // a kink of the clamp
          const double fd_g = (f64_loss(g + h, u, gov, w, Cd) -
                               f64_loss(g - h, u, gov, w, Cd)) /
                              (2 * h);
          const double fd_u = (f64_loss(g, u + h, gov, w, Cd) -
                               f64_loss(g, u - h, gov, w, Cd)) /
                              (2 * h);
          const double tol = std::ldexp(1.0, -8);
          REQUIRE(std::fabs(get(b.x_grad, e, c) - fd_g) <=
                  tol * std::fabs(fd_g) + 1e-7);
          REQUIRE(std::fabs(get(b.x_grad, e, H + c) - fd_u) <=
                  tol * std::fabs(fd_u) + 1e-7);
          // out = act * w within bf16 rounding.
          const double act = f64_loss(g, u, 1.0, 1.0, Cd);
          REQUIRE(std::fabs(get(b.out, e, c) - act * w) <=
                  std::ldexp(1.0, -8) * std::fabs(act * w) + 1e-7);
          dw += gov * act; // d(loss)/dw
        }
        CHECK(std::fabs(b.weight_grad.data<float>()[flat_of_row[e]] - dw) <=
              1e-5 * std::fabs(dw) + 1e-6);
      }
      // The padding row: weight 0 gives zero gradients; weight_grad entries
      // whose token_topk_to_pos is -1 are zero.
      for (int64_t c = 0; c < 2 * H; ++c)
        REQUIRE(get(b.x_grad, 2, c) == 0.0f);
      CHECK(b.weight_grad.data<float>()[1] == 0.0f);
      CHECK(b.weight_grad.data<float>()[3] == 0.0f);
      // The e4m3 gradient is the per-token cast of the float32 gradient: its
      // dequantized values are within the e4m3 bound of x_grad (plus bf16
      // rounding of x_grad).
      HostTensor deq = cast_back_ref(b.x_grad_fp8, "fp32", {1, 32});
      for (int64_t e = 0; e < E; ++e)
        for (int64_t c = 0; c < 2 * H; ++c) {
          const double xg = get(b.x_grad, e, c);
          const double sf = get(b.x_grad_fp8.sf, e, c / 32);
          REQUIRE(std::fabs(get(deq, e, c) - xg) <=
                  error_bound(Fmt::e4m3, xg, sf) * 1.01 +
                      std::ldexp(std::fabs(xg), -8));
          if (round)
            REQUIRE(bits(static_cast<float>(sf)) % (1u << 23) == 0);
        }
    }
  }
}

TEST_CASE("swiglu backward: clamped inputs have zero gradient and the "
          "clamped value in out",
          "[ref][quant]") {
  // g = 3 (0x44) > C = 0.5, u = 2 (0x40) > C; sf 1.
  OneRow r = one_row(0x44, 1.0f, 0x40, 1.0f, 1.0f, 2.0f);
  SwigluBackwardResult b = swiglu_backward_and_per_token_cast_ref(
      r.x, r.grad_out, r.weight, r.p2t, r.t2p, 32, false, 0.5f);
  CHECK(b.x_grad.at<uint16_t>({0, 0}) == 0x0000);
  CHECK(b.x_grad.at<uint16_t>({0, 32}) == 0x0000);
  CHECK(get(b.out, 0, 0) ==
        bf16_to_f32(f32_to_bf16(spec(0.5f, 0.5f, 1.0f, 2.0f).act * 2.0f)));
  // u = -2 (0xC0) < -C: du = 0; g = -3 (0xC4) is not clamped (upper only).
  OneRow n = one_row(0xC4, 1.0f, 0xC0, 1.0f, 1.0f, 2.0f);
  SwigluBackwardResult c = swiglu_backward_and_per_token_cast_ref(
      n.x, n.grad_out, n.weight, n.p2t, n.t2p, 32, false, 0.5f);
  CHECK(c.x_grad.at<uint16_t>({0, 32}) == 0x0000);
  CHECK(get(c.x_grad, 0, 0) ==
        bf16_to_f32(f32_to_bf16(spec(-3.0f, -0.5f, 1.0f, 2.0f).dg)));
  CHECK(c.weight_grad.at<float>({0, 0}) == spec(-3.0f, -0.5f, 1, 1).act);
}

TEST_CASE("swiglu backward: E = 0 and argument checks", "[ref][quant]") {
  QuantTensor x{HostTensor::zeros(DType::e4m3, {2, 128}),
                HostTensor::zeros(DType::f32, {2, 4})};
  HostTensor go = HostTensor::zeros(DType::bf16, {2, 64});
  HostTensor w = HostTensor::zeros(DType::f32, {1, 2});
  HostTensor p2t = i32({2}, {0, 1});
  HostTensor t2p = i32({1, 2}, {0, 1});
  QuantTensor ex{HostTensor::zeros(DType::e4m3, {0, 128}),
                 HostTensor::zeros(DType::f32, {0, 4})};
  SwigluBackwardResult e = swiglu_backward_and_per_token_cast_ref(
      ex, HostTensor::zeros(DType::bf16, {0, 64}), w, i32({0}, {}), t2p, 32);
  CHECK(e.out.shape() == shape_t{0, 64});
  CHECK(e.x_grad.shape() == shape_t{0, 128});
  CHECK(e.x_grad_fp8.sf.shape() == shape_t{0, 4});
  CHECK(e.weight_grad.shape() == shape_t{1, 2});
  // A 3-D x is flattened.
  QuantTensor x3{HostTensor::zeros(DType::e4m3, {1, 2, 128}), x.sf};
  CHECK(swiglu_backward_and_per_token_cast_ref(x3, go, w, p2t, t2p, 32)
            .x_grad.shape() == shape_t{2, 128});
  const std::string fn = "swiglu_backward_and_per_token_cast_ref: ";
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(x, go, w, p2t, t2p, 64),
      fn + "argument 'num_per_channels' is 64; requires 32 or 128");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(x, go, w, p2t, t2p, 128),
      fn + "argument 'x.data' has 2H = 128 columns; requires H % "
           "num_per_channels == 0 (num_per_channels = 128)");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(
          {HostTensor::zeros(DType::e4m3, {128}), x.sf}, go, w, p2t, t2p, 32),
      fn + "argument 'x.data' has shape [128]; requires a 2-D tensor");
  CHECK_THROWS_WITH(swiglu_backward_and_per_token_cast_ref(
                        {HostTensor::zeros(DType::bf16, {2, 128}), x.sf}, go, w,
                        p2t, t2p, 32),
                    fn + "argument 'x.data' has dtype bf16; requires e4m3");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(
          {x.data, HostTensor::zeros(DType::f32, {2, 2})}, go, w, p2t, t2p, 32),
      fn + "argument 'x.sf' has shape [2, 2]; requires [2, 4]");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(
          x, HostTensor::zeros(DType::bf16, {2, 32}), w, p2t, t2p, 32),
      fn + "argument 'grad_out' is bf16[2, 32] strides [32, 1]; "
           "requires 2 rows of H = 64 elements");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(
          x, HostTensor::zeros(DType::f32, {2, 64}), w, p2t, t2p, 32),
      fn + "argument 'grad_out' has dtype f32; requires bf16");
  CHECK_THROWS_WITH(
      swiglu_backward_and_per_token_cast_ref(
          x, go, HostTensor::zeros(DType::bf16, {1, 2}), p2t, t2p, 32),
      fn + "argument 'weight' has dtype bf16; requires f32");
  CHECK_THROWS_WITH(swiglu_backward_and_per_token_cast_ref(
                        x, go, w, i32({3}, {0, 0, 0}), t2p, 32),
                    fn + "argument 'pos_to_token_topk' has shape [3]; "
                         "requires [2]");
  CHECK_THROWS_WITH(swiglu_backward_and_per_token_cast_ref(
                        x, go, w, p2t, i32({2, 1}, {0, 1}), 32),
                    fn + "argument 'token_topk_to_pos' has shape [2, 1]; "
                         "requires [1, 2]");
  CHECK_THROWS_WITH(swiglu_backward_and_per_token_cast_ref(
                        x, go, w, i32({2}, {0, 2}), t2p, 32),
                    fn + "pos_to_token_topk[1] is 2; requires a negative value "
                         "(padding) or an index < 2 into weight");
}
