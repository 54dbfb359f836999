// normalize_weight_test.cpp - normalize_weight's case table: TileKernels'
// top-k counts with weights in [0, 1), tails of rows, no rows, its
// benchmark shape, and mistakes. Both outputs are compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(normalize_weight) {
  OpTest t{.op = "normalize_weight",
           .fills = {{"topk_weights", uniform(0.0, 1.0)}}};
  for (int64_t topk : {1, 2, 6, 7, 8, 9, 32}) {
    for (int64_t rows : {1, 37, 129, 0})
      t.cases.push_back({.shape = {rows, topk}});
    for (int64_t rows : {4001, 8001, 32008})
      t.cases.push_back({.shape = {rows, topk}, .kind = Case::big});
  }
  // TileKernels' benchmark: top 8 of 32 local experts, ep 8 (about 21.8k
  // rows with a local expert of 4001 x 8 tokens).
  // TileKernels' benchmark: top 8 of 256 experts, 32 of them local.
  t.cases.push_back(
      {.shape = {21760, 8}, .kind = Case::bench, .peer_us = 2.17});

  const auto w = fake(DType::f32, {10, 8});
  const auto den = fake(DType::f32, {10}, {}, 0x100000);
  const auto out = fake(DType::f32, {10, 8}, {}, 0x200000);
  t.errors = {
      {"bf16 weights",
       {fake(DType::bf16, {10, 8}), den, out},
       {},
       "normalize_weight: argument 'topk_weights' has dtype bf16; requires "
       "f32"},
      {"more than 32 a row",
       {fake(DType::f32, {10, 33}), den,
        fake(DType::f32, {10, 33}, {}, 0x200000)},
       {},
       "normalize_weight: argument 'topk_weights' has shape [10, 33] (K = "
       "33); requires 1 <= K <= 32"},
      {"a denominator of another length",
       {w, fake(DType::f32, {9}, {}, 0x100000), out},
       {},
       "normalize_weight: argument 'denominator' has shape [9]; requires [T] "
       "= [10]"},
      {"strided weights",
       {fake(DType::f32, {10, 8}, {16, 1}), den, out},
       {},
       "normalize_weight: argument 'topk_weights' is f32[10, 8] strides [16, "
       "1]; requires a contiguous tensor"},
  };
  return t;
}

} // namespace tilejit::harness
