// moe_topk_gate_backward_test.cpp - moe_topk_gate_backward's case table:
// expert counts with tails, K from 1 to 32, picks with duplicates and
// unused slots (-1), the auxiliary term (mask and grad_scores_sum over
// sequences), no tokens, the benchmark shape, and mistakes. The gradient
// is compared within a tolerance of the float64 reference (sums in
// another order, as TileKernels' own test does).
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

/// --shape T x E x K; `sequences` > 0: the auxiliary term over that many
/// sequences.
Case grad(int64_t tokens, int64_t experts, int64_t topk, int64_t sequences,
          int kind = Case::gpu) {
  Case c{.label = "",
         .shape = {tokens, experts, topk},
         .set = {{"routed_scaling_factor", "2.5"}},
         .kind = kind};
  if (sequences > 0) {
    c.set["mask"] = "passed";
    c.set["grad_scores_sum"] = "passed";
    c.set["Sq"] = std::to_string(sequences);
  }
  return c;
}

} // namespace

TILEJIT_OP_TEST(moe_topk_gate_backward) {
  OpTest t{.op = "moe_topk_gate_backward",
           .fills = {{"scores", uniform(0, 3)},
                     {"topk_idx", ids_below("E")},
                     {"topk_weights", uniform(0, 1)},
                     {"mask", bytes_in(0, 1)}},
           .compare = {{"grad_logits", allclose(2e-5, 2e-6)}}};
  for (auto [experts, topk] : {std::pair<int64_t, int64_t>{16, 6},
                               {72, 6},
                               {96, 8},
                               {256, 8},
                               {384, 8}}) {
    t.cases.push_back(grad(37, experts, topk, 0));
    t.cases.push_back(grad(36, experts, topk, 4));
    t.cases.push_back(grad(4000, experts, topk, 8, Case::big));
  }
  // One pick, 32 picks (duplicates of 16 experts), no tokens.
  t.cases.push_back(grad(19, 256, 1, 1));
  t.cases.push_back(grad(19, 16, 32, 19));
  t.cases.push_back(grad(0, 256, 8, 1));
  t.cases.push_back(grad(4096, 256, 8, 4, Case::bench));

  const auto scores = fake(DType::f32, {10, 64});
  const auto idx = fake(DType::i64, {10, 6}, {}, 0x30000);
  const auto weights = fake(DType::f32, {10, 6}, {}, 0x40000);
  const auto grads = fake(DType::f32, {10, 6}, {}, 0x50000);
  const auto out = fake(DType::f32, {10, 64}, {}, 0x60000);
  const auto flags = fake(DType::boolean, {10}, {}, 0x80000);
  const auto none = ops::absent();
  t.errors = {
      {"a mask without grad_scores_sum",
       {scores, idx, weights, grads, flags, none, out},
       {},
       "moe_topk_gate_backward: argument 'mask' is given without "
       "'grad_scores_sum'; requires both or neither"},
      {"sequences that do not divide the tokens",
       {scores, idx, weights, grads, flags,
        fake(DType::f32, {3, 64}, {}, 0x90000), out},
       {},
       "moe_topk_gate_backward: argument 'grad_scores_sum' has 3 rows; "
       "requires Sq >= 1 sequences dividing T = 10 (the rows of 'scores')"},
      {"33 picks",
       {scores, fake(DType::i64, {10, 33}, {}, 0x30000),
        fake(DType::f32, {10, 33}, {}, 0x40000),
        fake(DType::f32, {10, 33}, {}, 0x50000), none, none, out},
       {},
       "moe_topk_gate_backward: argument 'topk_idx' has shape [10, 33] (K "
       "= 33); requires 1 <= K <= 32"},
      {"a sigmoid router",
       {scores, idx, weights, grads, none, none, out},
       {{"scoring_func", std::string("sigmoid")}},
       "moe_topk_gate_backward: argument 'scoring_func' is 'sigmoid'; "
       "requires sqrtsoftplus"},
  };
  return t;
}

} // namespace tilejit::harness
