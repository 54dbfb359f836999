// engram_gate_fwd_test.cpp - Tests of engram_gate_fwd_ref: hand-computed
// rows for each rule of spec §2.3, a float64 cross-check, layouts, errors.
#include "engram/reference.h"
#include "engram_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace tilejit::engram;
using namespace engram_test;
using tilejit::ref::compare_exact;

namespace {

constexpr int64_t kD = 256;

double sigmoid(double r) { return 1 / (1 + std::exp(-r)); }

/// Fills row (t, h) of x and k and head h of w with constants.
struct RowSpec {
  double x, k, w;
};

} // namespace

TEST_CASE("engram_gate_fwd: hand-computed rows pin each rule",
          "[ref][engram]") {
  // Constant rows of D = 256, three heads per call, one call per token (the
  // weight differs between the two tokens' rows):
  //   row   x    k     w       v  | Sx/D Sk/D P      z       gate
  //   (0,0) 1    1     1       1  | 1    1    256    16      sig(4)
  //   (0,1) 2    0.5   -1      1  | 4    .25  -256   -16     sig(-4)
  //   (0,2) 0    1     1       1  | 0    1    0      0       sig(+0.1)
  //   (1,0) 1    1     1/64   -2  | 1    1    4      0.25    sig(0.5)
  //   (1,1) 1    1     -2^-12 -2  | 1    1    -1/16  -2^-8   sig(-0.1)
  //   (1,2) 3    -1    2      -2  | 9    1    -1536  -32     sig(-sqrt(32))
  // z = P * rstd_x * rstd_k / sqrt(256) = P * rstd_x * rstd_k / 16; clamp =
  // 0.01 so sqrt(clamp) = 0.1: |z| < clamp keeps z's sign at magnitude 0.1,
  // and z == 0 counts as positive (the kernel's copysign; torch gives 0.5).
  const RowSpec rows[2][3] = {
      {{1, 1, 1}, {2, 0.5, -1}, {0, 1, 1}},
      {{1, 1, 1.0 / 64}, {1, 1, -1.0 / 4096}, {3, -1, 2}}};
  const double v_of[2] = {1, -2};
  const double p_want[2][3] = {{256, -256, 0}, {4, -1.0 / 16, -1536}};
  const double rx_want[2][3] = {{1, 0.5, 1e10}, {1, 1, 1.0 / 3}};
  const double rk_want[2][3] = {{1, 2, 1}, {1, 1, 1}};
  const double g_want[2][3] = {
      {sigmoid(4), sigmoid(-4), sigmoid(0.1)},
      {sigmoid(0.5), sigmoid(-0.1), sigmoid(-std::sqrt(32.0))}};
  // bf16(fp32 x + g*v), worked by hand: e.g. 1 + 0.98201376 = 1.98201376,
  // bf16 spacing in [1, 2) is 2^-7, 1.98201376 / 2^-7 = 253.7 -> 254 ->
  // 1.984375; 1 - 2 * 0.62245935 = -0.2449187 -> 251 * 2^-10.
  const double out_want[2][3] = {{1.984375, 2.015625, 0.5234375},
                                 {-0.2451171875, 0.050048828125, 3.0}};
  for (int t = 0; t < 2; ++t) {
    std::vector<double> x, k, w, v(kD, v_of[t]);
    for (int h = 0; h < 3; ++h) {
      x.insert(x.end(), kD, rows[t][h].x);
      k.insert(k.end(), kD, rows[t][h].k);
      w.insert(w.end(), kD, rows[t][h].w);
    }
    EngramGateFwdResult r = engram_gate_fwd_ref(
        bf16_tensor({1, 3, kD}, x), bf16_tensor({1, 3, kD}, k),
        bf16_tensor({1, kD}, v), f32_tensor({3, kD}, w), 1e-20f, 0.01f);
    REQUIRE(r.dot.has_value());
    for (int h = 0; h < 3; ++h) {
      INFO("row (" << t << ", " << h << ")");
      // dot is the raw sum of x*w*k: no rstd, no 1/sqrt(D).
      CHECK(r.dot->at<float>({0, h}) == p_want[t][h]);
      CHECK(r.rstd_x->at<float>({0, h}) == Approx(rx_want[t][h]).epsilon(1e-6));
      CHECK(r.rstd_k->at<float>({0, h}) == Approx(rk_want[t][h]).epsilon(1e-6));
      CHECK(r.gate_score->at<float>({0, h}) ==
            Approx(g_want[t][h]).epsilon(1e-6));
      for (int d : {0, 17, 255})
        CHECK(tilejit::ref::element_as_double(
                  r.out, std::vector<int64_t>{0, h, d}) == out_want[t][h]);
    }
  }
}

TEST_CASE("engram_gate_fwd: eps enters the rstd inside the sqrt",
          "[ref][engram]") {
  std::vector<double> ones(kD, 1.0);
  EngramGateFwdResult r = engram_gate_fwd_ref(
      bf16_tensor({1, 1, kD}, ones), bf16_tensor({1, 1, kD}, ones),
      bf16_tensor({1, kD}, ones), f32_tensor({1, kD}, ones), 0.5f, 1e-6f);
  // rstd = 1 / sqrt(1 + 0.5); z = 256 / 1.5 / 16.
  CHECK(r.rstd_x->at<float>({0, 0}) == Approx(1 / std::sqrt(1.5)));
  CHECK(r.gate_score->at<float>({0, 0}) ==
        Approx(sigmoid(std::sqrt(256 / 1.5 / 16))).epsilon(1e-6));
}

TEST_CASE("engram_gate_fwd: agrees with a float64 RMSNorm formulation",
          "[ref][engram]") {
  std::mt19937 rng(7);
  const int64_t T = 5, hc = 4, D = 512;
  HostTensor x = randn_bf16({T, hc, D}, rng), k = randn_bf16({T, hc, D}, rng),
             v = randn_bf16({T, D}, rng), w = randn_f32({hc, D}, rng);
  GateF64 f{T,         hc,        D,         values(x),
            values(k), values(v), values(w), std::vector<double>(hc * D, 1.0),
            1e-20,     1e-6};
  EngramGateFwdResult r = engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f);
  std::vector<double> gate, rx, rk, dot;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < hc; ++h) {
      gate.push_back(f.gate(t, h));
      rx.push_back(f.rstd(f.x, t, h));
      rk.push_back(f.rstd(f.k, t, h));
      // P = z * sqrt(D) / (rstd_x * rstd_k)
      dot.push_back(f.score(t, h) * std::sqrt(double(D)) / rx.back() /
                    rk.back());
    }
  check_close("gate", values(*r.gate_score), gate, 1e-6, 1e-7);
  check_close("rstd_x", values(*r.rstd_x), rx, 1e-6, 0);
  check_close("rstd_k", values(*r.rstd_k), rk, 1e-6, 0);
  check_close("dot", values(*r.dot), dot, 1e-5, 1e-4);
  // bf16 output: within half a bf16 ulp (up to 2^-8 relative) plus fp32 noise.
  check_close("out", values(r.out), f.out(), 1.0 / 256 + 1e-6, 1e-30);
  CHECK(tilejit::ref::calc_diff(r.out, bf16_tensor({T, hc, D}, f.out())) <
        1e-10);
}

TEST_CASE("engram_gate_fwd: save_for_backward only drops the saved tensors",
          "[ref][engram]") {
  std::mt19937 rng(1);
  HostTensor x = randn_bf16({3, 2, kD}, rng), k = randn_bf16({3, 2, kD}, rng),
             v = randn_bf16({3, kD}, rng), w = randn_f32({2, kD}, rng);
  EngramGateFwdResult a = engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f, true);
  EngramGateFwdResult b = engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f, false);
  CHECK(compare_exact(a.out, b.out) == "");
  CHECK(a.dot.has_value());
  CHECK_FALSE(b.dot.has_value());
  CHECK_FALSE(b.gate_score.has_value());
  CHECK_FALSE(b.rstd_x.has_value());
  CHECK_FALSE(b.rstd_k.has_value());
}

TEST_CASE("engram_gate_fwd: an image token's out is its x; its saved values "
          "are any token's (2.1's image_token_mask)",
          "[ref][engram]") {
  std::mt19937 rng(3);
  HostTensor x = randn_bf16({3, 2, kD}, rng), k = randn_bf16({3, 2, kD}, rng),
             v = randn_bf16({3, kD}, rng), w = randn_f32({2, kD}, rng);
  HostTensor mask = HostTensor::zeros(tilejit::DType::boolean, {3});
  mask.data<uint8_t>()[1] = 1;
  EngramGateFwdResult plain = engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f);
  EngramGateFwdResult masked =
      engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f, true, mask);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t h = 0; h < 2; ++h) {
      CHECK(masked.gate_score->at<float>({t, h}) ==
            plain.gate_score->at<float>({t, h}));
      for (int64_t d : {int64_t{0}, int64_t{100}, kD - 1}) {
        const std::vector<int64_t> at = {t, h, d};
        const HostTensor &want = t == 1 ? x : plain.out;
        CHECK(tilejit::ref::element_as_double(masked.out, at) ==
              tilejit::ref::element_as_double(want, at));
      }
    }
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f, true,
                          HostTensor::zeros(tilejit::DType::i32, {3})),
      "engram_gate_fwd_ref: argument 'image_token_mask' has dtype i32; "
      "requires bool");
}

TEST_CASE("engram_gate_fwd: strided k and v give the contiguous results",
          "[ref][engram]") {
  std::mt19937 rng(2);
  const int64_t T = 3, hc = 2;
  HostTensor x = randn_bf16({T, hc, kD}, rng), w = randn_f32({hc, kD}, rng);
  // k: every head row padded to 2*D; v: rows 3*D apart.
  HostTensor k_big = randn_bf16({T, hc, 2 * kD}, rng);
  HostTensor v_big = randn_bf16({T, 3 * kD}, rng);
  const int64_t k_strides[] = {hc * 2 * kD, 2 * kD, 1},
                v_strides[] = {3 * kD, 1};
  const int64_t k_shape[] = {T, hc, kD}, v_shape[] = {T, kD};
  HostTensor k = HostTensor::view(k_big.raw(), DType::bf16, k_shape, k_strides);
  HostTensor v = HostTensor::view(v_big.raw(), DType::bf16, v_shape, v_strides);
  EngramGateFwdResult a = engram_gate_fwd_ref(x, k, v, w, 1e-20f, 1e-6f);
  EngramGateFwdResult b =
      engram_gate_fwd_ref(x, k.clone(), v.clone(), w, 1e-20f, 1e-6f);
  CHECK(compare_exact(a.out, b.out) == "");
  CHECK(compare_exact(*a.gate_score, *b.gate_score) == "");
  CHECK(compare_exact(*a.rstd_k, *b.rstd_k) == "");
}

TEST_CASE("engram_gate_fwd: zero tokens and one token", "[ref][engram]") {
  std::mt19937 rng(3);
  EngramGateFwdResult r =
      engram_gate_fwd_ref(HostTensor::zeros(DType::bf16, {0, 4, kD}),
                          HostTensor::zeros(DType::bf16, {0, 4, kD}),
                          HostTensor::zeros(DType::bf16, {0, kD}),
                          randn_f32({4, kD}, rng), 1e-20f, 1e-6f);
  CHECK(r.out.shape() == std::vector<int64_t>{0, 4, kD});
  CHECK(r.dot->shape() == std::vector<int64_t>{0, 4});
  CHECK(r.rstd_k->shape() == std::vector<int64_t>{0, 4});

  // All-zero inputs: rstd = 1/sqrt(eps), z = 0 -> sigmoid(+sqrt(clamp)), and
  // out = x + g * 0 = 0.
  HostTensor zx = HostTensor::zeros(DType::bf16, {1, 1, kD});
  EngramGateFwdResult z =
      engram_gate_fwd_ref(zx, zx, HostTensor::zeros(DType::bf16, {1, kD}),
                          HostTensor::zeros(DType::f32, {1, kD}), 1e-4f, 0.04f);
  CHECK(z.rstd_x->at<float>({0, 0}) == Approx(100.0));
  CHECK(z.gate_score->at<float>({0, 0}) == Approx(sigmoid(0.2)).epsilon(1e-6));
  CHECK(z.dot->at<float>({0, 0}) == 0.0f);
  CHECK(values(z.out) == std::vector<double>(kD, 0.0));
}

TEST_CASE("engram_gate_fwd: argument errors name the argument",
          "[ref][engram]") {
  std::mt19937 rng(4);
  HostTensor x = randn_bf16({2, 2, kD}, rng), k = randn_bf16({2, 2, kD}, rng),
             v = randn_bf16({2, kD}, rng), w = randn_f32({2, kD}, rng);
  using tilejit::UserError;
  // x in f32 instead of bf16.
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(HostTensor::zeros(DType::f32, {2, 2, kD}), k, v, w,
                          1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'hidden_states' has dtype f32; requires "
      "bf16");
  // k with a different token count.
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(x, randn_bf16({3, 2, kD}, rng), v, w, 1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'k' has shape [3, 2, 256]; requires "
      "[T, hc, D] = [2, 2, 256]");
  // v with one row too many.
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(x, k, randn_bf16({3, kD}, rng), w, 1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'v' has shape [3, 256]; requires [T, D] "
      "= [2, 256]");
  // weight_fused in bf16.
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(x, k, v, randn_bf16({2, kD}, rng), 1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'weight_fused' has dtype bf16; requires "
      "f32");
  // D = 128 is not a multiple of 256.
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(
          randn_bf16({2, 2, 128}, rng), randn_bf16({2, 2, 128}, rng),
          randn_bf16({2, 128}, rng), randn_f32({2, 128}, rng), 1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'hidden_states' has hidden size D = 128; "
      "requires a positive multiple of 256");
  // x transposed over (T, hc): not contiguous.
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(x.transposed(0, 1), k, v, w, 1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'hidden_states' has shape [2, 2, 256] "
      "and strides [256, 512, 1]; requires a contiguous tensor");
  // k read every other element along D.
  HostTensor k_big = randn_bf16({2, 2, 2 * kD}, rng);
  const int64_t shape[] = {2, 2, kD}, strides[] = {4 * kD, 2 * kD, 2};
  CHECK_THROWS_WITH(
      engram_gate_fwd_ref(
          x, HostTensor::view(k_big.raw(), DType::bf16, shape, strides), v, w,
          1e-20f, 1e-6f),
      "engram_gate_fwd_ref: argument 'k' has shape [2, 2, 256] and stride[2] "
      "= 2; requires a contiguous last dimension");
}
