// engram_sinkhorn_test.cpp - The Engram Sinkhorn building blocks' case
// tables. Momentum update: bf16 and f32 grads and buffers, with and
// without Nesterov, any shape of a multiple of 256 elements, bitwise (the
// kernel's FMAs); step and finalize: TileKernels' shapes, fewer rows than
// blocks, one row, no rows, within f32 tolerances of the references' f64
// norms; the reduction bitwise (fixed order).
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(engram_sinkhorn_momentum_update) {
  OpTest t{.op = "engram_sinkhorn_momentum_update", .poison_outputs = true};
  for (DType g : {DType::f32, DType::bf16})
    for (DType m : {DType::f32, DType::bf16})
      t.cases.push_back({.label = "",
                         .shape = {1024, 768},
                         .dtypes = {{"grad", g}, {"momentum_buffer", m}}});
  t.cases.push_back({.label = "plain momentum",
                     .shape = {3, 256},
                     .set = {{"nesterov", "false"}, {"beta1", "0.95"}}});
  t.cases.push_back({.label = "", .shape = {4096, 7168}, .kind = Case::bench});
  t.errors = {{"100 elements",
               {fake(DType::f32, {100}), fake(DType::f32, {100}, {}, 0x90000),
                fake(DType::f32, {100}, {}, 0x90000),
                fake(DType::f32, {100}, {}, 0xa0000)},
               {},
               "engram_sinkhorn_momentum_update: argument 'grad' has 100 "
               "elements; requires a multiple of 256"}};
  return t;
}

TILEJIT_OP_TEST(engram_sinkhorn_step) {
  OpTest t{
      .op = "engram_sinkhorn_step",
      .fills = {{"row_scale", uniform(0.5, 2)}, {"col_scale", uniform(0.5, 2)}},
      .compare = {{"row_scale_out", allclose(1e-5, 0)},
                  {"row_norm", allclose(1e-5, 0)},
                  {"col_sumsq_partial", allclose(1e-5, 1e-9)}},
      .poison_outputs = true};
  for (int64_t dh : {256, 2560, 7168})
    t.cases.push_back({.label = "", .shape = {4096, dh}});
  t.cases.push_back({.label = "fewer rows than blocks", .shape = {100, 1024}});
  t.cases.push_back(
      {.label = "", .shape = {1, 512}, .set = {{"num_partials", "4"}}});
  t.cases.push_back({.label = "no rows", .shape = {0, 512}});
  t.cases.push_back({.label = "", .shape = {4096, 7168}, .kind = Case::bench});
  t.errors = {
      {"Dh of 100",
       {fake(DType::f32, {8, 100}), fake(DType::f32, {8}, {}, 0x90000),
        fake(DType::f32, {100}, {}, 0xa0000),
        fake(DType::f32, {8}, {}, 0x90000), fake(DType::f32, {8}, {}, 0xb0000),
        fake(DType::f32, {396, 100}, {}, 0xc0000)},
       {},
       "engram_sinkhorn_step: argument 'matrix' has shape [8, 100] "
       "(Dh = 100); requires Dh a multiple of 256"}};
  return t;
}

TILEJIT_OP_TEST(engram_sinkhorn_step_reduce) {
  OpTest t{.op = "engram_sinkhorn_step_reduce", .poison_outputs = true};
  // 64 rows in flight a step, then steps of 32, 16, ..., 1 for the rest:
  // 6 steps and 8 + 4 rows, one step, 64 - 1 rows after one, 4 + 2 + 1, 1.
  for (int64_t p : {396, 64, 127, 7, 1})
    t.cases.push_back({.label = "", .shape = {p, 7168}});
  t.cases.push_back({.label = "", .shape = {396, 256}});
  t.cases.push_back({.label = "", .shape = {396, 7168}, .kind = Case::bench});
  t.errors = {
      {"a partial row too short",
       {fake(DType::f32, {396, 7168}), fake(DType::f32, {7000}, {}, 0x9000000)},
       {},
       "engram_sinkhorn_step_reduce: argument 'col_sumsq' has shape "
       "[7000]; requires [Dh] = [7168]"}};
  return t;
}

TILEJIT_OP_TEST(engram_sinkhorn_finalize) {
  OpTest t{
      .op = "engram_sinkhorn_finalize",
      .fills = {{"row_scale", uniform(0.5, 2)}, {"col_scale", uniform(0.5, 2)}},
      .compare = {{"out", allclose(1e-5, 1e-7)}},
      .poison_outputs = true};
  for (int64_t dh : {256, 2560, 7168})
    t.cases.push_back(
        {.label = "", .shape = {1000, dh}, .set = {{"alpha", "0.3"}}});
  t.cases.push_back({.label = "no rows", .shape = {0, 512}});
  t.cases.push_back({.label = "", .shape = {4096, 7168}, .kind = Case::bench});
  t.errors = {{"Dh of 100",
               {fake(DType::f32, {8, 100}), fake(DType::f32, {8}, {}, 0x90000),
                fake(DType::f32, {100}, {}, 0xa0000),
                fake(DType::f32, {8, 100}, {}, 0xb0000)},
               {},
               "engram_sinkhorn_finalize: argument 'matrix' has shape [8, "
               "100] (Dh = 100); requires Dh a multiple of 256"}};
  return t;
}

} // namespace tilejit::harness
