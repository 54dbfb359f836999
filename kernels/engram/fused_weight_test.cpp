// fused_weight_test.cpp - fused_weight's case table: TileKernels' shapes
// (4 rows, D multiples of 256), products overflowing and subnormal, no
// rows, the benchmark shape with TileKernels' time, and a mistake.
// Bitwise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(fused_weight) {
  OpTest t{.op = "fused_weight", .poison_outputs = true};
  for (int64_t d : {256, 1280, 2560, 7168})
    t.cases.push_back({.label = "", .shape = {4, d}});
  // Products past f32's range (inf) and below its normal range
  // (subnormal, no flush to zero).
  for (double scale : {1e19, 1e-20})
    t.cases.push_back({.label = "",
                       .shape = {3, 4096},
                       .fills = {{"weight_hidden", normal(0, scale)},
                                 {"weight_embed", normal(0, scale)}}});
  t.cases.push_back({.label = "no rows", .shape = {0, 512}});
  t.cases.push_back(
      {.label = "", .shape = {4, 7168}, .kind = Case::bench, .peer_us = 3.16});
  t.errors = {
      {"a row of 1000",
       {fake(DType::bf16, {4, 1000}), fake(DType::bf16, {4, 1000}, {}, 0x90000),
        fake(DType::f32, {4, 1000}, {}, 0xa0000)},
       {},
       "fused_weight: argument 'weight_hidden' has shape [4, 1000] (D = "
       "1000); requires D a multiple of 256"}};
  return t;
}

} // namespace tilejit::harness
