// engram_gate_bwd_test.cpp - Tests of engram_gate_bwd_ref: every gradient
// against central finite differences of a float64 forward (spec §2.4), the
// clamp region, the per-block token ranges of grad_w_partial, layouts, errors.
#include "engram/reference.h"
#include "engram_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace tilejit::engram;
using namespace engram_test;
using tilejit::ref::compare_exact;

namespace {

constexpr int64_t kHc = 4;

/// Seeded inputs whose scores z stay away from 0 and from +-clamp, where the
/// gate has a kink or a jump and central differences are meaningless.
struct Case {
  HostTensor x, k, v, w, grad_out;
  GateF64 f;
  std::vector<double> go;
};

Case make_case(int64_t T, int64_t D, double eps, double clamp, unsigned seed) {
  for (;; ++seed) {
    std::mt19937 rng(seed);
    Case c;
    c.x = randn_bf16({T, kHc, D}, rng);
    c.k = randn_bf16({T, kHc, D}, rng, 0.5);
    c.v = randn_bf16({T, D}, rng);
    c.w = randn_f32({kHc, D}, rng, 1.5);
    c.grad_out = randn_bf16({T, kHc, D}, rng);
    c.go = values(c.grad_out);
    c.f = GateF64{T,           kHc,
                  D,           values(c.x),
                  values(c.k), values(c.v),
                  values(c.w), std::vector<double>(kHc * D, 1.0),
                  eps,         clamp};
    bool ok = true;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < kHc; ++h) {
        double z = std::fabs(c.f.score(t, h));
        ok = ok && z > 0.05 && std::fabs(z - clamp) > 0.05;
      }
    if (ok)
      return c;
  }
}

EngramGateBwdResult run_bwd(const Case &c, float eps, float clamp,
                            int64_t num_sms) {
  EngramGateFwdResult fwd = engram_gate_fwd_ref(c.x, c.k, c.v, c.w, eps, clamp);
  return engram_gate_bwd_ref(c.grad_out, c.x, c.k, c.v, c.w, *fwd.dot,
                             *fwd.gate_score, *fwd.rstd_x, *fwd.rstd_k, clamp,
                             num_sms);
}

/// sum_b grad_w_partial[b], as double.
std::vector<double> total_grad_w(const HostTensor &partial) {
  std::vector<double> p = values(partial), sum(p.size() / partial.size(0));
  for (size_t i = 0; i < p.size(); ++i)
    sum[i % sum.size()] += p[i];
  return sum;
}

} // namespace

TEST_CASE("engram_gate_bwd: gradients match central finite differences",
          "[ref][engram]") {
  // clamp 1e-6 (the tests' value) leaves every row unclamped; clamp 0.5
  // clamps the rows with |z| < 0.5 (about a third), whose dL/dP is 0.
  const double eps = GENERATE(1e-20, 0.3);
  const double clamp = GENERATE(1e-6, 0.5);
  INFO("eps " << eps << ", clamp " << clamp);
  const int64_t T = 3, D = 256;
  Case c = make_case(T, D, eps, clamp, 11);
  EngramGateBwdResult g = run_bwd(c, float(eps), float(clamp), 2);
  auto loss = [&] { return c.f.loss(c.go); };
  // bf16 results: half an ulp is 2^-9 relative; the rest is fp32 noise of
  // the saved values and the differences' own error.
  const double rtol = 1.0 / 256, atol = 1e-5;
  check_close("grad_x", values(g.grad_x), finite_diff(c.f.x, loss), rtol, atol);
  check_close("grad_k", values(g.grad_k), finite_diff(c.f.k, loss), rtol, atol);
  check_close("grad_v", values(g.grad_v), finite_diff(c.f.v, loss), rtol, atol);
  check_close("grad_w", total_grad_w(g.grad_w_partial),
              finite_diff(c.f.wh, loss), 1e-5, 1e-5);
}

TEST_CASE("engram_gate_bwd: clamped rows pass grad_out through unchanged",
          "[ref][engram]") {
  // clamp 9 holds every |z| (all < 9 here) at 9: dL/dP = 0, so grad_x = go,
  // grad_k = 0 and grad_w = 0, while grad_v = sum_h go * g still flows.
  // The gate is sigmoid(+-3), far from saturation, so a missing clamp branch
  // would show.
  Case c = make_case(2, 256, 1e-20, 9, 5);
  EngramGateFwdResult fwd =
      engram_gate_fwd_ref(c.x, c.k, c.v, c.w, 1e-20f, 9.0f);
  EngramGateBwdResult g =
      engram_gate_bwd_ref(c.grad_out, c.x, c.k, c.v, c.w, *fwd.dot,
                          *fwd.gate_score, *fwd.rstd_x, *fwd.rstd_k, 9.0f, 4);
  CHECK(compare_exact(g.grad_x, c.grad_out) == "");
  CHECK(values(g.grad_k) == std::vector<double>(2 * kHc * 256, 0.0));
  CHECK(values(g.grad_w_partial) == std::vector<double>(4 * kHc * 256, 0.0));
  for (int t = 0; t < 2; ++t)
    for (int h = 0; h < kHc; ++h)
      CHECK(std::fabs(fwd.gate_score->at<float>({t, h}) - 0.5) ==
            Approx(1 / (1 + std::exp(-3.0)) - 0.5));
  std::vector<double> gv = values(g.grad_v), want(2 * 256);
  for (int t = 0; t < 2; ++t)
    for (int d = 0; d < 256; ++d)
      for (int h = 0; h < kHc; ++h)
        want[t * 256 + d] +=
            c.go[(t * kHc + h) * 256 + d] * fwd.gate_score->at<float>({t, h});
  check_close("grad_v", gv, want, 1.0 / 256, 1e-30);
}

TEST_CASE("engram_gate_bwd: P == 0 with clamp 0 gives finite zero dL/dP",
          "[ref][engram]") {
  // All-zero x: P = 0 and rstd_x = 1/sqrt(eps). With clamp_value = 0 the
  // formula would divide by |P| = 0; the reference treats the row as clamped.
  std::mt19937 rng(9);
  HostTensor x = HostTensor::zeros(DType::bf16, {1, kHc, 256});
  HostTensor k = randn_bf16({1, kHc, 256}, rng), v = randn_bf16({1, 256}, rng);
  HostTensor w = randn_f32({kHc, 256}, rng),
             go = randn_bf16({1, kHc, 256}, rng);
  EngramGateFwdResult fwd = engram_gate_fwd_ref(x, k, v, w, 1e-6f, 0.0f);
  CHECK(fwd.gate_score->at<float>({0, 0}) == 0.5f); // sigmoid(+sqrt(0))
  EngramGateBwdResult g =
      engram_gate_bwd_ref(go, x, k, v, w, *fwd.dot, *fwd.gate_score,
                          *fwd.rstd_x, *fwd.rstd_k, 0.0f, 1);
  CHECK(compare_exact(g.grad_x, go) == "");
  CHECK(values(g.grad_k) == std::vector<double>(kHc * 256, 0.0));
}

TEST_CASE("engram_gate_bwd: grad_w_partial rows sum their block's tokens",
          "[ref][engram]") {
  const int64_t T = 5;
  Case c = make_case(T, 256, 1e-20, 1e-6, 21);
  // num_sms = T: one token per block, row t is token t's contribution.
  std::vector<double> per_token =
      values(run_bwd(c, 1e-20f, 1e-6f, T).grad_w_partial);
  const int64_t row = kHc * 256;
  auto tokens_sum = [&](int64_t begin, int64_t end) {
    std::vector<double> s(row, 0.0);
    for (int64_t t = begin; t < end; ++t)
      for (int64_t i = 0; i < row; ++i)
        s[i] += per_token[t * row + i];
    return s;
  };
  auto block = [&](const std::vector<double> &all, int64_t b) {
    return std::vector<double>(all.begin() + b * row,
                               all.begin() + (b + 1) * row);
  };
  // num_sms = 4: ceil(5/4) = 2 tokens per block: [0,2) [2,4) [4,5) and an
  // empty block written as zeros.
  HostTensor p4 = run_bwd(c, 1e-20f, 1e-6f, 4).grad_w_partial;
  CHECK(p4.shape() == std::vector<int64_t>{4, kHc, 256});
  std::vector<double> all4 = values(p4);
  check_close("block 0", block(all4, 0), tokens_sum(0, 2), 1e-6, 1e-7);
  check_close("block 1", block(all4, 1), tokens_sum(2, 4), 1e-6, 1e-7);
  check_close("block 2", block(all4, 2), tokens_sum(4, 5), 1e-6, 1e-7);
  CHECK(block(all4, 3) == std::vector<double>(row, 0.0));
  // num_sms = 7 > T: blocks 5 and 6 are empty.
  std::vector<double> all7 =
      values(run_bwd(c, 1e-20f, 1e-6f, 7).grad_w_partial);
  CHECK(block(all7, 2) == block(per_token, 2));
  CHECK(block(all7, 6) == std::vector<double>(row, 0.0));
  // num_sms = 1: one block holds everything.
  check_close("one block", values(run_bwd(c, 1e-20f, 1e-6f, 1).grad_w_partial),
              tokens_sum(0, T), 1e-6, 1e-7);
}

TEST_CASE("engram_gate_bwd: grad_k takes the layout of empty_like(k)",
          "[ref][engram]") {
  const int64_t T = 2, D = 256;
  Case c = make_case(T, D, 1e-20, 1e-6, 31);
  EngramGateBwdResult base = run_bwd(c, 1e-20f, 1e-6f, 3);
  CHECK(base.grad_k.is_contiguous());
  CHECK(base.grad_x.is_contiguous());
  CHECK(base.grad_v.is_contiguous());

  // Dense but head-major: k = (hc, T, D) storage seen as (T, hc, D).
  HostTensor k_hm = HostTensor::zeros(DType::bf16, {kHc, T, D});
  HostTensor k_perm = k_hm.transposed(0, 1);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < kHc; ++h)
      for (int64_t d = 0; d < D; ++d)
        k_perm.at<uint16_t>({t, h, d}) = c.k.at<uint16_t>({t, h, d});
  Case p = c;
  p.k = k_perm;
  EngramGateBwdResult perm = run_bwd(p, 1e-20f, 1e-6f, 3);
  CHECK(perm.grad_k.strides() == k_perm.strides());
  CHECK(compare_exact(perm.grad_k, base.grad_k, false) == "");

  // With gaps between the head rows: not dense, so row-major.
  HostTensor k_big = HostTensor::zeros(DType::bf16, {T, kHc, 2 * D});
  const int64_t shape[] = {T, kHc, D}, strides[] = {kHc * 2 * D, 2 * D, 1};
  HostTensor k_gap = HostTensor::view(k_big.raw(), DType::bf16, shape, strides);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < kHc; ++h)
      for (int64_t d = 0; d < D; ++d)
        k_gap.at<uint16_t>({t, h, d}) = c.k.at<uint16_t>({t, h, d});
  p.k = k_gap;
  EngramGateBwdResult gap = run_bwd(p, 1e-20f, 1e-6f, 3);
  CHECK(compare_exact(gap.grad_k, base.grad_k) == "");
}

TEST_CASE("engram_gate_bwd: an image token passes grad_out to grad_x, "
          "zeros to grad_k and grad_v and nothing to grad_w (2.1)",
          "[ref][engram]") {
  const Case c = make_case(3, 256, 1e-20, 1e-6, 11);
  EngramGateFwdResult fwd =
      engram_gate_fwd_ref(c.x, c.k, c.v, c.w, 1e-20f, 1e-6f);
  HostTensor mask = HostTensor::zeros(DType::boolean, {3});
  mask.data<uint8_t>()[1] = 1;
  auto bwd = [&](std::optional<HostTensor> m) {
    return engram_gate_bwd_ref(c.grad_out, c.x, c.k, c.v, c.w, *fwd.dot,
                               *fwd.gate_score, *fwd.rstd_x, *fwd.rstd_k, 1e-6f,
                               1, m);
  };
  EngramGateBwdResult plain = bwd(std::nullopt), masked = bwd(mask);
  const std::vector<double> gx = values(masked.grad_x),
                            gk = values(masked.grad_k),
                            gv = values(masked.grad_v),
                            px = values(plain.grad_x);
  const int64_t row = kHc * 256;
  for (int64_t i = 0; i < 3 * row; ++i) {
    const bool image = i / row == 1;
    CHECK(gx[i] == (image ? c.go[i] : px[i]));
    if (image)
      CHECK(gk[i] == 0);
  }
  for (int64_t d = 0; d < 256; ++d)
    CHECK(gv[256 + d] == 0);
  // grad_w: the other two tokens' terms alone.
  std::vector<double> others(row, 0.0);
  for (int64_t t : {0, 2}) {
    HostTensor one = HostTensor::zeros(DType::boolean, {3});
    for (int64_t u = 0; u < 3; ++u)
      one.data<uint8_t>()[u] = u == t ? 0 : 1;
    const std::vector<double> w = values(bwd(one).grad_w_partial);
    for (int64_t i = 0; i < row; ++i)
      others[i] += w[i];
  }
  const std::vector<double> got = values(masked.grad_w_partial);
  for (int64_t i = 0; i < row; ++i)
    CHECK(got[i] == Approx(others[i]).margin(1e-6));
}

TEST_CASE("engram_gate_bwd: zero tokens", "[ref][engram]") {
  std::mt19937 rng(3);
  HostTensor e3 = HostTensor::zeros(DType::bf16, {0, kHc, 512});
  HostTensor e2 = HostTensor::zeros(DType::f32, {0, kHc});
  EngramGateBwdResult g =
      engram_gate_bwd_ref(e3, e3, e3, HostTensor::zeros(DType::bf16, {0, 512}),
                          randn_f32({kHc, 512}, rng), e2, e2, e2, e2, 1e-6f, 8);
  CHECK(g.grad_x.shape() == std::vector<int64_t>{0, kHc, 512});
  CHECK(g.grad_k.shape() == std::vector<int64_t>{0, kHc, 512});
  CHECK(g.grad_v.shape() == std::vector<int64_t>{0, 512});
  CHECK(g.grad_w_partial.shape() == std::vector<int64_t>{8, kHc, 512});
  CHECK(values(g.grad_w_partial) == std::vector<double>(8 * kHc * 512, 0.0));
}

TEST_CASE("engram_gate_bwd: argument errors name the argument",
          "[ref][engram]") {
  std::mt19937 rng(4);
  const int64_t T = 2, D = 256;
  HostTensor x = randn_bf16({T, kHc, D}, rng), k = randn_bf16({T, kHc, D}, rng),
             v = randn_bf16({T, D}, rng), w = randn_f32({kHc, D}, rng),
             go = randn_bf16({T, kHc, D}, rng), s = randn_f32({T, kHc}, rng);
  // Two heads: the backward is written for hc == 4.
  HostTensor x2 = randn_bf16({T, 2, D}, rng);
  CHECK_THROWS_WITH(
      engram_gate_bwd_ref(randn_bf16({T, 2, D}, rng), x2, x2, v,
                          randn_f32({2, D}, rng), randn_f32({T, 2}, rng),
                          randn_f32({T, 2}, rng), randn_f32({T, 2}, rng),
                          randn_f32({T, 2}, rng), 1e-6f),
      "engram_gate_bwd_ref: argument 'hidden_states' has hc = 2 heads; "
      "requires hc == 4");
  // grad_out in f32.
  CHECK_THROWS_WITH(
      engram_gate_bwd_ref(randn_f32({T, kHc, D}, rng), x, k, v, w, s, s, s, s,
                          1e-6f),
      "engram_gate_bwd_ref: argument 'grad_out' has dtype f32; requires bf16");
  // A saved tensor of the wrong shape.
  CHECK_THROWS_WITH(
      engram_gate_bwd_ref(go, x, k, v, w, s, randn_f32({T, 3}, rng), s, s,
                          1e-6f),
      "engram_gate_bwd_ref: argument 'gate_score' has shape [2, 3]; requires "
      "[T, hc] = [2, 4]");
  // rstd_k transposed: not contiguous.
  HostTensor s_t = randn_f32({kHc, T}, rng).transposed(0, 1);
  CHECK_THROWS_WITH(
      engram_gate_bwd_ref(go, x, k, v, w, s, s, s, s_t, 1e-6f),
      "engram_gate_bwd_ref: argument 'rstd_k' has shape [2, 4] and strides "
      "[1, 2]; requires a contiguous tensor");
  // No blocks at all.
  CHECK_THROWS_WITH(
      engram_gate_bwd_ref(go, x, k, v, w, s, s, s, s, 1e-6f, 0),
      "engram_gate_bwd_ref: argument 'num_sms' is 0; requires > 0");
  // D = 128.
  HostTensor x128 = randn_bf16({T, kHc, 128}, rng);
  CHECK_THROWS_WITH(
      engram_gate_bwd_ref(x128, x128, x128, randn_bf16({T, 128}, rng),
                          randn_f32({kHc, 128}, rng), s, s, s, s, 1e-6f),
      "engram_gate_bwd_ref: argument 'hidden_states' has hidden size D = 128; "
      "requires a positive multiple of 256");
}
