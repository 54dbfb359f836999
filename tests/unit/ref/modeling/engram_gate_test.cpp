// engram_gate_test.cpp - Tests of the Engram gate layer reference
// (EngramGateFn, spec §2.6): the forward's op chain, every gradient against
// central finite differences of a float64 layer, main_grad, layouts, errors.
#include "engram/reference.h"
#include "modeling/engram_gate_reference.h"

#include "../engram/engram_test_util.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

using namespace tilejit::modeling;
using namespace engram_test;
using tilejit::ref::compare_exact;

namespace {

constexpr int64_t kHc = 4, kD = 512;

struct Layer {
  HostTensor x, k, v, wh, we, grad_out;
};

/// Inputs of shape [lead..., hc, D]; seeds are tried until every score is
/// at least 0.05 from 0 and from +-clamp (clamp 1e-6 here).
Layer make_layer(const std::vector<int64_t> &lead, unsigned seed) {
  std::vector<int64_t> xs = lead, vs = lead;
  xs.insert(xs.end(), {kHc, kD});
  vs.push_back(kD);
  for (;; ++seed) {
    std::mt19937 rng(seed);
    Layer l{randn_bf16(xs, rng),        randn_bf16(xs, rng),
            randn_bf16(vs, rng),        randn_bf16({kHc, kD}, rng, 1.5),
            randn_bf16({kHc, kD}, rng), randn_bf16(xs, rng)};
    GateF64 f{numel(lead), kHc,          kD,           values(l.x), values(l.k),
              values(l.v), values(l.wh), values(l.we), 1e-20,       1e-6};
    bool ok = true;
    for (int64_t t = 0; t < f.T; ++t)
      for (int64_t h = 0; h < kHc; ++h)
        ok = ok && std::fabs(f.score(t, h)) > 0.05;
    if (ok)
      return l;
  }
}

EngramGateGrads forward_backward(const Layer &l, int64_t num_sms = 132) {
  EngramGateOutput o =
      engram_gate_ref(l.x, l.k, l.v, l.wh, l.we, 1e-6f, 1e-20f);
  return engram_gate_backward_ref(o.saved, l.grad_out, std::nullopt,
                                  std::nullopt, num_sms);
}

} // namespace

TEST_CASE("engram_gate: forward is fused_weight then engram_gate_fwd",
          "[ref][modeling]") {
  Layer l = make_layer({2, 3}, 1);
  EngramGateOutput o =
      engram_gate_ref(l.x, l.k, l.v, l.wh, l.we, 1e-6f, 1e-20f);
  CHECK(o.out.shape() == l.x.shape());
  // The same chain by hand on (T, hc, D) = (6, 4, 512) reinterpretations.
  HostTensor w = tilejit::engram::fused_weight_ref(l.wh, l.we);
  tilejit::engram::EngramGateFwdResult f = tilejit::engram::engram_gate_fwd_ref(
      l.x.reinterpret(DType::bf16, std::vector<int64_t>{6, kHc, kD}),
      l.k.reinterpret(DType::bf16, std::vector<int64_t>{6, kHc, kD}),
      l.v.reinterpret(DType::bf16, std::vector<int64_t>{6, kD}), w, 1e-20f,
      1e-6f);
  CHECK(compare_exact(
            o.out.reinterpret(DType::bf16, std::vector<int64_t>{6, kHc, kD}),
            f.out) == "");
  CHECK(compare_exact(o.saved.weight_fused, w) == "");
  CHECK(compare_exact(o.saved.dot, *f.dot) == "");
  CHECK(compare_exact(o.saved.gate_score, *f.gate_score) == "");
  CHECK(compare_exact(o.saved.rstd_x, *f.rstd_x) == "");
  CHECK(compare_exact(o.saved.rstd_k, *f.rstd_k) == "");
  CHECK(o.saved.clamp_value == 1e-6f);
  // And the meaning: x + sigmoid(signed_sqrt(<RMSNorm(x) wh, RMSNorm(k) we>
  // / sqrt(D))) v, in float64.
  GateF64 g{6,           kHc,          kD,           values(l.x), values(l.k),
            values(l.v), values(l.wh), values(l.we), 1e-20,       1e-6};
  check_close("out", values(o.out), g.out(), 1.0 / 256 + 1e-6, 1e-30);
}

TEST_CASE("engram_gate: backward matches central finite differences",
          "[ref][modeling]") {
  Layer l = make_layer({1, 2}, 2);
  EngramGateGrads g = forward_backward(l);
  REQUIRE(g.grad_weight_hidden.has_value());
  REQUIRE(g.grad_weight_embed.has_value());
  CHECK(g.grad_hidden_states.shape() == l.x.shape());
  CHECK(g.grad_k.shape() == l.k.shape());
  CHECK(g.grad_v.shape() == l.v.shape());
  CHECK(g.grad_weight_hidden->dtype() == DType::f32);
  GateF64 f{2,           kHc,          kD,           values(l.x), values(l.k),
            values(l.v), values(l.wh), values(l.we), 1e-20,       1e-6};
  std::vector<double> go = values(l.grad_out);
  auto loss = [&] { return f.loss(go); };
  const double rtol = 1.0 / 256, atol = 1e-5; // bf16 results
  check_close("grad_hidden_states", values(g.grad_hidden_states),
              finite_diff(f.x, loss), rtol, atol);
  check_close("grad_k", values(g.grad_k), finite_diff(f.k, loss), rtol, atol);
  check_close("grad_v", values(g.grad_v), finite_diff(f.v, loss), rtol, atol);
  check_close("grad_weight_hidden", values(*g.grad_weight_hidden),
              finite_diff(f.wh, loss), 1e-5, 1e-5);
  check_close("grad_weight_embed", values(*g.grad_weight_embed),
              finite_diff(f.we, loss), 1e-5, 1e-5);
}

TEST_CASE("engram_gate: main_grad buffers take the weight gradients",
          "[ref][modeling]") {
  Layer l = make_layer({3}, 3);
  EngramGateGrads fresh = forward_backward(l);
  std::mt19937 rng(30);
  HostTensor main_h = randn_f32({kHc, kD}, rng);
  const std::vector<double> start = values(main_h);
  EngramGateOutput o =
      engram_gate_ref(l.x, l.k, l.v, l.wh, l.we, 1e-6f, 1e-20f);
  // Only weight_hidden has a main_grad: its gradient is accumulated there
  // and not returned; weight_embed's comes back as before.
  EngramGateGrads g =
      engram_gate_backward_ref(o.saved, l.grad_out, main_h, std::nullopt);
  CHECK_FALSE(g.grad_weight_hidden.has_value());
  REQUIRE(g.grad_weight_embed.has_value());
  CHECK(compare_exact(*g.grad_weight_embed, *fresh.grad_weight_embed) == "");
  std::vector<double> want = values(*fresh.grad_weight_hidden);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] += start[i];
  check_close("main_grad", values(main_h), want, 1e-6, 1e-6);
  CHECK(compare_exact(g.grad_hidden_states, fresh.grad_hidden_states) == "");
}

TEST_CASE("engram_gate: the SM count only changes rounding",
          "[ref][modeling]") {
  Layer l = make_layer({5}, 4);
  EngramGateGrads a = forward_backward(l, 132);
  // 7 and 1 are not multiples of 4: the original's grad_w_reduce would
  // assert; the reference pads the partial rows with zeros.
  for (int64_t sms : {7, 1, 8}) {
    INFO("num_sms " << sms);
    EngramGateGrads b = forward_backward(l, sms);
    CHECK(compare_exact(b.grad_hidden_states, a.grad_hidden_states) == "");
    CHECK(compare_exact(b.grad_k, a.grad_k) == "");
    CHECK(compare_exact(b.grad_v, a.grad_v) == "");
    check_close("grad_weight_hidden", values(*b.grad_weight_hidden),
                values(*a.grad_weight_hidden), 1e-6, 1e-6);
    check_close("grad_weight_embed", values(*b.grad_weight_embed),
                values(*a.grad_weight_embed), 1e-6, 1e-6);
  }
}

TEST_CASE("engram_gate: grad_k follows k's layout through the flattening",
          "[ref][modeling]") {
  Layer l = make_layer({2, 3}, 5);
  EngramGateGrads base = forward_backward(l);
  CHECK(base.grad_k.is_contiguous());
  auto copy_into = [&](HostTensor dst) {
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t h = 0; h < kHc; ++h)
          for (int64_t d = 0; d < kD; ++d)
            dst.at<uint16_t>({a, b, h, d}) = l.k.at<uint16_t>({a, b, h, d});
    return dst;
  };
  const int64_t shape[] = {2, 3, kHc, kD};
  // Head-major but dense: the leading dims merge into a token dim of stride
  // D, and empty_like keeps the layout.
  HostTensor store = HostTensor::zeros(DType::bf16, {kHc, 6, kD});
  const int64_t dense[] = {3 * kD, kD, 6 * kD, 1};
  Layer p = l;
  p.k = copy_into(HostTensor::view(store.raw(), DType::bf16, shape, dense));
  EngramGateGrads g = forward_backward(p);
  CHECK(g.grad_k.strides() == std::vector<int64_t>(dense, dense + 4));
  CHECK(compare_exact(g.grad_k, base.grad_k, false) == "");
  // Leading dims that cannot merge (a slice of 3 of 4 rows): k is copied,
  // so grad_k is contiguous.
  HostTensor big = HostTensor::zeros(DType::bf16, {2, 4, kHc, kD});
  const int64_t sliced[] = {4 * kHc * kD, kHc * kD, kD, 1};
  p.k = copy_into(HostTensor::view(big.raw(), DType::bf16, shape, sliced));
  g = forward_backward(p);
  CHECK(compare_exact(g.grad_k, base.grad_k) == "");
}

TEST_CASE("engram_gate: no leading dims, and zero tokens", "[ref][modeling]") {
  // x [hc, D] and v [D]: one token.
  Layer one = make_layer({}, 6);
  EngramGateGrads g = forward_backward(one);
  CHECK(g.grad_hidden_states.shape() == std::vector<int64_t>{kHc, kD});
  CHECK(g.grad_v.shape() == std::vector<int64_t>{kD});
  Layer as_batch = make_layer({1}, 6); // the same draws, shaped [1, hc, D]
  EngramGateGrads b = forward_backward(as_batch);
  CHECK(values(g.grad_hidden_states) == values(b.grad_hidden_states));
  CHECK(values(*g.grad_weight_embed) == values(*b.grad_weight_embed));

  // Zero tokens: empty outputs, zero weight gradients.
  std::mt19937 rng(7);
  HostTensor x = HostTensor::zeros(DType::bf16, {0, kHc, kD});
  HostTensor v = HostTensor::zeros(DType::bf16, {0, kD});
  HostTensor wh = randn_bf16({kHc, kD}, rng), we = randn_bf16({kHc, kD}, rng);
  EngramGateOutput o = engram_gate_ref(x, x, v, wh, we, 1e-6f, 1e-20f);
  CHECK(o.out.shape() == x.shape());
  EngramGateGrads z = engram_gate_backward_ref(o.saved, x);
  CHECK(z.grad_v.shape() == v.shape());
  CHECK(values(*z.grad_weight_hidden) == std::vector<double>(kHc * kD, 0.0));
}

TEST_CASE("engram_gate: argument errors name the argument", "[ref][modeling]") {
  Layer l = make_layer({2, 3}, 8);
  std::mt19937 rng(9);
  // k with its leading dims swapped (same token count).
  CHECK_THROWS_WITH(
      engram_gate_ref(l.x, randn_bf16({3, 2, kHc, kD}, rng), l.v, l.wh, l.we,
                      1e-6f, 1e-20f),
      "engram_gate_ref: argument 'k' has shape [3, 2, 4, 512]; requires the "
      "shape of hidden_states, [2, 3, 4, 512]");
  // v with the head dim left in.
  CHECK_THROWS_WITH(engram_gate_ref(l.x, l.k, l.x, l.wh, l.we, 1e-6f, 1e-20f),
                    "engram_gate_ref: argument 'v' has shape [2, 3, 4, 512]; "
                    "requires [*, D] = [2, 3, 512]");
  // x of rank 1.
  CHECK_THROWS_WITH(
      engram_gate_ref(randn_bf16({kD}, rng), l.k, l.v, l.wh, l.we, 1e-6f,
                      1e-20f),
      "engram_gate_ref: argument 'hidden_states' has shape [512]; requires "
      "[*, hc, D]");
  EngramGateOutput o =
      engram_gate_ref(l.x, l.k, l.v, l.wh, l.we, 1e-6f, 1e-20f);
  // grad_out of v's shape.
  CHECK_THROWS_WITH(
      engram_gate_backward_ref(o.saved, l.v),
      "engram_gate_backward_ref: argument 'grad_out' is bf16[2, 3, 512] "
      "strides [1536, 512, 1]; requires bf16 of the shape of hidden_states, "
      "[2, 3, 4, 512]");
  // A bf16 main_grad.
  CHECK_THROWS_WITH(
      engram_gate_backward_ref(o.saved, l.grad_out, std::nullopt,
                               randn_bf16({kHc, kD}, rng)),
      "engram_gate_backward_ref: argument 'weight_embed_main_grad' is "
      "bf16[4, 512] strides [512, 1]; requires a contiguous f32 tensor of "
      "shape [4, 512]");
  // D = 256: the forward works, the backward's grad_w_reduce needs 512.
  HostTensor x = randn_bf16({2, kHc, 256}, rng), v = randn_bf16({2, 256}, rng);
  HostTensor w = randn_bf16({kHc, 256}, rng);
  EngramGateOutput o256 = engram_gate_ref(x, x, v, w, w, 1e-6f, 1e-20f);
  CHECK_THROWS_WITH(engram_gate_backward_ref(o256.saved, x),
                    "engram_gate_backward_ref: argument 'hidden_states' has "
                    "hidden size D = 256; requires D % 512 == 0 "
                    "(grad_w_reduce)");
}
