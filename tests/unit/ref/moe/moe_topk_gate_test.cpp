// moe_topk_gate_test.cpp - Hand-computed cases of TileKernels 2.1's router
// (tk21_ops.md §4.1, §4.2): the biased ranking with unbiased weights, ties,
// the butterfly sum, masked / image / fixed-routing tokens, shared experts,
// the physical map, the backward formula in float64, and every argument
// message.
#include "moe_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace moe_test;
using namespace tilejit::moe;

namespace {

/// The spec's weight of pick k: u_k / (butterfly sum + 1e-20) * scale, the
/// butterfly written out for up to 4 picks (lanes 0..3; the others 0):
/// o = 16, 8, 4 add zeros, o = 2 pairs (0, 2), (1, 3), o = 1 adds those.
std::vector<float> weights(std::vector<float> u, float scale) {
  u.resize(4, 0.0f);
  const float sum = ((u[0] + u[2]) + (u[1] + u[3])) + 1e-20f;
  std::vector<float> w;
  for (float v : u)
    w.push_back(v / sum * scale);
  return w;
}

} // namespace

TEST_CASE("moe_topk_gate_forward ranks biased sqrt-softplus scores and "
          "weights the unbiased ones",
          "[ref][moe]") {
  HostTensor logits = f32({1, 8}, {0, 1, 2, -1, 0.5f, 3, -2, 1.5f});
  MoeTopkGateArgs a;
  // Expert 5 has the largest score, 2 the next; a bias lifts 6 above both.
  a.bias = f32({8}, {0, 0, 0, 0, 0, 0, 5, 0});
  MoeTopkGateResult r = moe_topk_gate_forward_ref(logits, 3, false, 0, 2.5f, 0,
                                                  "sqrtsoftplus", a);
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{6, 5, 2});
  std::vector<float> u;
  for (float x : {-2.0f, 3.0f, 2.0f})
    u.push_back(sqrtsoftplus_score(x));
  std::vector<float> want = weights(u, 2.5f);
  std::vector<float> got = values<float>(r.topk_weights);
  for (int k = 0; k < 3; ++k)
    CHECK(got[k] == want[k]);
  // The scores output is the unbiased u of every expert.
  for (int e = 0; e < 8; ++e)
    CHECK(r.scores.data<float>()[e] ==
          sqrtsoftplus_score(logits.data<float>()[e]));
}

TEST_CASE("moe_topk_gate_forward breaks ties to the lower expert and adds "
          "shared experts at weight 1",
          "[ref][moe]") {
  HostTensor logits = f32({1, 4}, {1, 2, 2, 0});
  MoeTopkGateResult r = moe_topk_gate_forward_ref(logits, 2, true, 2, 1.0f, 0);
  CHECK(values<int64_t>(r.topk_idx) == std::vector<int64_t>{1, 2, 4, 5});
  std::vector<float> w = values<float>(r.topk_weights);
  CHECK(w[2] == 1.0f);
  CHECK(w[3] == 1.0f);
  // Two equal scores: each weight is u / (u + u + 1e-20).
  const float u = sqrtsoftplus_score(2.0f);
  CHECK(w[0] == u / (u + u + 1e-20f));
  CHECK(w[0] == w[1]);
  // Without use_shared_as_routed the shared count is ignored.
  r = moe_topk_gate_forward_ref(logits, 2, false, 2, 1.0f, 0);
  CHECK(r.topk_idx.size(1) == 2);
}

TEST_CASE("moe_topk_gate_forward skips masked tokens, biases image tokens "
          "with image_bias and keeps fixed routes",
          "[ref][moe]") {
  HostTensor logits = f32({3, 4}, {0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 0, 1});
  MoeTopkGateArgs a;
  a.mask = boolean({1, 0, 1});
  a.bias = f32({4}, {0, 0, 0, 0});
  a.image_bias = f32({4}, {9, 0, 0, 0});
  a.image_token_mask = boolean({1, 0, 0});
  a.fix_routing_mask = boolean({0, 0, 1});
  a.unmapped_topk_idx = i64({3, 2}, {7, 7, 7, 7, 2, 0});
  MoeTopkGateResult r = moe_topk_gate_forward_ref(logits, 2, false, 0, 1.0f, 0,
                                                  "sqrtsoftplus", a);
  // Token 0 is an image token: image_bias lifts expert 0 to the top.
  CHECK(row<int64_t>(r.topk_idx, 0) == std::vector<int64_t>{0, 3});
  // Token 1 is masked: -1, weight 0, scores 0, unmapped -1.
  CHECK(row<int64_t>(r.topk_idx, 1) == std::vector<int64_t>{-1, -1});
  CHECK(row<float>(r.topk_weights, 1) == std::vector<float>{0, 0});
  CHECK(row<float>(r.scores, 1) == std::vector<float>{0, 0, 0, 0});
  // Token 2 keeps its fixed route (2, 0), weighted by its unbiased scores.
  CHECK(row<int64_t>(r.topk_idx, 2) == std::vector<int64_t>{2, 0});
  const std::vector<float> w =
      weights({sqrtsoftplus_score(0.0f), sqrtsoftplus_score(0.0f)}, 1.0f);
  CHECK(row<float>(r.topk_weights, 2)[0] == w[0]);
  // unmapped_topk_idx is written for every routed token.
  CHECK(values<int64_t>(*a.unmapped_topk_idx) ==
        std::vector<int64_t>{0, 3, -1, -1, 2, 0});
}

TEST_CASE("moe_topk_gate_forward maps logical to physical experts by "
          "(ep_rank + t * 23333) % count",
          "[ref][moe]") {
  HostTensor logits = f32({2, 4}, {0, 0, 5, 0, 0, 5, 0, 0});
  MoeTopkGateArgs a;
  // Expert e has e + 1 replicas e * 10 + j; shared expert 4 has one.
  a.to_physical_map = i32({5, 4}, {0,  -1, -1, -1, 10, 11, -1, -1, 20, 21,
                                   22, -1, 30, 31, 32, 33, 40, -1, -1, -1});
  a.logical_count = i32({5}, {1, 2, 3, 4, 1});
  MoeTopkGateResult r =
      moe_topk_gate_forward_ref(logits, 1, true, 1, 1.0f, 1, "sqrtsoftplus", a);
  // Token 0: expert 2, (1 + 0) % 3 = 1 -> 21; shared 4 -> 40.
  CHECK(row<int64_t>(r.topk_idx, 0) == std::vector<int64_t>{21, 40});
  // Token 1: expert 1, (1 + 23333) % 2 = 0 -> 10.
  CHECK(row<int64_t>(r.topk_idx, 1) == std::vector<int64_t>{10, 40});
}

TEST_CASE("moe_topk_gate_forward names every bad argument", "[ref][moe]") {
  HostTensor logits = f32({2, 8}, std::vector<float>(16, 0.5f));
  auto call = [&](int64_t topk, bool shared_routed, int64_t shared,
                  std::string_view scoring, const MoeTopkGateArgs &a,
                  const HostTensor *x = nullptr) {
    moe_topk_gate_forward_ref(x ? *x : logits, topk, shared_routed, shared,
                              1.0f, 0, scoring, a);
  };
  MoeTopkGateArgs none;
  CHECK_THROWS_WITH(
      call(2, false, 0, "sigmoid", none),
      "moe_topk_gate_forward_ref: argument 'scoring_func' is 'sigmoid'; "
      "requires 'sqrtsoftplus'");
  HostTensor six = f32({1, 6}, std::vector<float>(6, 0.0f));
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", none, &six),
      "moe_topk_gate_forward_ref: argument 'logits' has shape [1, 6]; "
      "requires the experts a multiple of 4");
  CHECK_THROWS_WITH(
      call(9, false, 0, "sqrtsoftplus", none),
      "moe_topk_gate_forward_ref: argument 'num_topk' is 9; requires 1 to 8");
  CHECK_THROWS_WITH(
      call(2, true, 3, "sqrtsoftplus", none),
      "moe_topk_gate_forward_ref: argument 'num_shared_experts' is 3 with "
      "use_shared_as_routed; requires 1 or 2");
  HostTensor wide = f32({1, 32}, std::vector<float>(32, 0.0f));
  CHECK_THROWS_WITH(call(32, true, 1, "sqrtsoftplus", none, &wide),
                    "moe_topk_gate_forward_ref: arguments 'num_topk' and "
                    "'num_shared_experts' make 33 slots; requires at most 32");
  MoeTopkGateArgs a;
  a.image_bias = f32({8}, std::vector<float>(8, 0.0f));
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'image_bias' is given without "
      "'image_token_mask'; requires both or neither");
  a = {};
  a.fix_routing_mask = boolean({0, 1});
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'fix_routing_mask' is given "
      "without 'unmapped_topk_idx'; requires both");
  a.unmapped_topk_idx = i64({2, 2}, {0, 1, 8, 0});
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'unmapped_topk_idx' holds 8 at "
      "[1, 0] of a fixed-routing token; requires an expert in [0, 8)");
  a = {};
  a.logical_count = i32({8}, std::vector<int32_t>(8, 1));
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'logical_count' is given without "
      "'to_physical_map'; requires both or neither");
  a.to_physical_map = i32({7, 1}, std::vector<int32_t>(7, 0));
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'to_physical_map' has 7 rows; "
      "requires E + S = 8 (routed and shared experts)");
  a.to_physical_map = i32({8, 1}, std::vector<int32_t>(8, 0));
  a.logical_count = i32({8}, std::vector<int32_t>(8, 2));
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'logical_count' holds 2 at [0]; "
      "requires 1 to 1 (the columns of 'to_physical_map')");
  a = {};
  a.force_random = boolean({0, 0});
  CHECK_THROWS_WITH(
      call(2, false, 0, "sqrtsoftplus", a),
      "moe_topk_gate_forward_ref: argument 'force_random' is given; "
      "requires none (the forced-random path draws cuRAND's Philox "
      "numbers, which this reference does not reproduce yet)");
  HostTensor inf = f32({1, 4}, {0, INFINITY, 0, 0});
  CHECK_THROWS_WITH(
      call(1, false, 0, "sqrtsoftplus", none, &inf),
      "moe_topk_gate_forward_ref: argument 'logits' holds inf at [0, 1]; "
      "requires finite values");
}

TEST_CASE("moe_topk_gate_backward is the router's gradient in float64",
          "[ref][moe]") {
  // One token, 4 experts, picks 1 and 3 (slot 2 unused).
  const std::vector<float> u = {0.5f, 1.0f, 0.25f, 2.0f};
  HostTensor scores = f32({1, 4}, u);
  HostTensor idx = i64({1, 3}, {1, 3, -1});
  HostTensor w = f32({1, 3}, {0.25f, 0.75f, 0});
  HostTensor g = f32({1, 3}, {1.0f, -2.0f, 7.0f});
  const float rsf = 2.0f;
  HostTensor got = moe_topk_gate_backward_ref(scores, idx, w, g, rsf);
  auto dudx = [](double v) { return -std::expm1(-v * v) / (2 * v); };
  const double d = 1.0 + 2.0, dot = 1.0 * 0.25 + -2.0 * 0.75;
  const double route1 = (rsf * 1.0 - dot) / (d + 1e-20);
  const double route3 = (rsf * -2.0 - dot) / (d + 1e-20);
  CHECK(got.data<float>()[0] == 0.0f);
  CHECK(got.data<float>()[1] == static_cast<float>(dudx(1.0) * route1));
  CHECK(got.data<float>()[2] == 0.0f);
  CHECK(got.data<float>()[3] == static_cast<float>(dudx(2.0) * route3));

  // With the auxiliary term: h of the token's sequence; a masked token
  // keeps the routed part only.
  HostTensor h = f32({1, 4}, {1, 0, 0, 0});
  HostTensor aux = moe_topk_gate_backward_ref(scores, idx, w, g, rsf,
                                              "sqrtsoftplus", boolean({1}), h);
  const double su = 0.5 + 1.0 + 0.25 + 2.0, hu = 0.5;
  CHECK(aux.data<float>()[0] ==
        static_cast<float>(dudx(0.5) * ((1 - hu / su) / su)));
  CHECK(aux.data<float>()[1] ==
        static_cast<float>(dudx(1.0) * (route1 + (0 - hu / su) / su)));
  HostTensor masked = moe_topk_gate_backward_ref(
      scores, idx, w, g, rsf, "sqrtsoftplus", boolean({0}), h);
  CHECK(values<float>(masked) == values<float>(got));

  // A score of 0 has no gradient (du/dx taken as 0).
  HostTensor zero =
      moe_topk_gate_backward_ref(f32({1, 4}, {0, 1, 1, 1}), i64({1, 1}, {0}),
                                 f32({1, 1}, {1}), f32({1, 1}, {1}), 1.0f);
  CHECK(zero.data<float>()[0] == 0.0f);
}

TEST_CASE("moe_topk_gate_backward names every bad argument", "[ref][moe]") {
  HostTensor scores = f32({2, 4}, std::vector<float>(8, 1.0f));
  HostTensor idx = i64({2, 2}, {0, 1, 2, -1});
  HostTensor w = f32({2, 2}, {1, 1, 1, 1});
  CHECK_THROWS_WITH(
      moe_topk_gate_backward_ref(scores, idx, w, w, 1.0f, "softmax"),
      "moe_topk_gate_backward_ref: argument 'scoring_func' is "
      "'softmax'; requires 'sqrtsoftplus'");
  CHECK_THROWS_WITH(
      moe_topk_gate_backward_ref(scores, i64({2, 2}, {0, 4, 0, 0}), w, w, 1.0f),
      "moe_topk_gate_backward_ref: argument 'topk_idx' holds 4 at [0, "
      "1]; requires -1 or a routed expert in [0, 4)");
  CHECK_THROWS_WITH(
      moe_topk_gate_backward_ref(scores, idx, w, w, 1.0f, "sqrtsoftplus",
                                 boolean({1, 1})),
      "moe_topk_gate_backward_ref: argument 'mask' is given without "
      "'grad_scores_sum'; requires both or neither");
  CHECK_THROWS_WITH(
      moe_topk_gate_backward_ref(scores, idx, w, w, 1.0f, "sqrtsoftplus",
                                 boolean({1, 1}),
                                 f32({3, 4}, std::vector<float>(12, 0))),
      "moe_topk_gate_backward_ref: argument 'grad_scores_sum' has "
      "shape [3, 4]; requires (Sq, E = 4) with Sq dividing T = 2");
  CHECK_THROWS_WITH(
      moe_topk_gate_backward_ref(scores, i64({3, 2}, {0, 0, 0, 0, 0, 0}), w, w,
                                 1.0f),
      "moe_topk_gate_backward_ref: argument 'topk_idx' has 3 rows; "
      "requires T = 2 (the rows of 'scores')");
}
