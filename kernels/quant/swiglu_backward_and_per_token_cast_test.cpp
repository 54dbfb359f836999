// swiglu_backward_and_per_token_cast_test.cpp - the fused SwiGLU backward's
// case table: TileKernels' grid (its six hidden sizes, both groups, both
// roundings, the three clamps), hidden sizes that take smaller chunks,
// tails of rows, no rows, the benchmark shapes, and mistakes. out, x_grad
// and the e4m3 gradient with its scales are compared bytewise; weight_grad,
// a sum in another order, as TileKernels' test does (rtol = atol = 1e-4).
#include "op_test.h"

namespace tilejit::harness {

namespace {

/// --shape E x 2H x T x K, T K = 2E: element_indices gives each row its own
/// weight (or -1), and some weights have no row.
Case backward(int64_t e, int64_t h, int64_t group, bool round,
              const char *clamp, int kind = Case::gpu) {
  return {.label = "",
          .shape = {e, 2 * h, std::max<int64_t>(1, e / 2), 4},
          .set = {{"num_per_channels", std::to_string(group)},
                  {"round_sf", round ? "true" : "false"},
                  {"swiglu_clamp_value", clamp}},
          .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(swiglu_backward_and_per_token_cast) {
  // x: per_token_cast's codes of values around 1 (TileKernels casts randn),
  // scales near 1/448 times a row's absmax.
  OpTest t{
      .op = "swiglu_backward_and_per_token_cast",
      .fills = {{"x", normal(0, 120)},
                {"x_sf", uniform(0.002, 0.02)},
                {"weight", uniform(0, 1)},
                {"pos_to_token_topk", element_indices("weight")},
                {"token_topk_to_pos", inverse_indices("pos_to_token_topk")}},
      .compare = {{"weight_grad", allclose(1e-4, 1e-4)}},
      // Every entry of every output is written: weight_grad's zeros
      // where token_topk_to_pos is -1 included.
      .poison_outputs = true};
  // TileKernels' grid.
  for (int64_t h : {2048, 2560, 3072, 4096, 6144, 7168})
    for (int64_t group : {32, 128})
      for (bool round : {false, true})
        for (const char *clamp : {"0", "10", "0.5"})
          t.cases.push_back(backward(37, h, group, round, clamp));
  // Chunks of 256, 128 and 32 columns; many rows; one row; none (the
  // weights' gradient is still zeroed where no row takes a weight).
  t.cases.push_back(backward(29, 1280, 128, true, "0.5"));
  t.cases.push_back(backward(17, 384, 128, false, "0"));
  t.cases.push_back(backward(13, 96, 32, true, "10"));
  t.cases.push_back(backward(3001, 2048, 128, true, "0.5"));
  t.cases.push_back(backward(1, 2048, 32, false, "0"));
  t.cases.push_back(backward(0, 2048, 128, false, "0"));
  // More weights than rows: blocks past E only zero weight_grad.
  Case few = backward(5, 256, 32, false, "10");
  few.shape[2] = 200;
  t.cases.push_back(few);
  // TileKernels' benchmark: top 8 of 32 experts on 8 ranks of 4001 tokens,
  // H = 2048, groups of 128, rounded scales, without and with the clamp.
  for (const char *clamp : {"0", "0.5"}) {
    Case c = backward(35546, 2048, 128, true, clamp, Case::bench);
    c.shape[2] = 32008;
    c.shape[3] = 8;
    c.peer_us = clamp[1] ? 0 : 347.13; // measured: no clamp
    t.cases.push_back(c);
  }

  const auto x = fake(DType::e4m3, {8, 512});
  const auto sf = fake(DType::f32, {8, 4}, {}, 0x20000);
  const auto go = fake(DType::bf16, {8, 256}, {}, 0x30000);
  const auto w = fake(DType::f32, {8, 2}, {}, 0x40000);
  const auto pos = fake(DType::i32, {8}, {}, 0x50000);
  const auto to_pos = fake(DType::i32, {8, 2}, {}, 0x60000);
  const auto out = fake(DType::bf16, {8, 256}, {}, 0x70000);
  const auto q = fake(DType::e4m3, {8, 512}, {}, 0x80000);
  const auto qsf = fake(DType::f32, {8, 4}, {}, 0x90000);
  const auto grad = fake(DType::bf16, {8, 512}, {}, 0xa0000);
  const auto wg = fake(DType::f32, {8, 2}, {}, 0xb0000);
  t.errors = {
      {"a group of 64",
       {x, fake(DType::f32, {8, 8}, {}, 0x20000), go, w, pos, to_pos, out, q,
        fake(DType::f32, {8, 8}, {}, 0x90000), grad, wg},
       {{"num_per_channels", int64_t{64}}},
       "swiglu_backward_and_per_token_cast: argument 'num_per_channels' is "
       "64; requires 32 or 128"},
      {"a hidden size not a multiple of the group",
       {fake(DType::e4m3, {8, 320}), fake(DType::f32, {8, 2}, {}, 0x20000),
        fake(DType::bf16, {8, 160}, {}, 0x30000), w, pos, to_pos,
        fake(DType::bf16, {8, 160}, {}, 0x70000),
        fake(DType::e4m3, {8, 320}, {}, 0x80000),
        fake(DType::f32, {8, 2}, {}, 0x90000),
        fake(DType::bf16, {8, 320}, {}, 0xa0000), wg},
       {},
       "swiglu_backward_and_per_token_cast: argument 'x' has 2H = 320 "
       "columns; requires H % num_per_channels == 0 (num_per_channels = "
       "128)"},
      {"grad_out of another hidden size",
       {x, sf, fake(DType::bf16, {8, 512}, {}, 0x30000), w, pos, to_pos, out, q,
        qsf, grad, wg},
       {},
       "swiglu_backward_and_per_token_cast: argument 'grad_out' is bf16[8, "
       "512] strides [512, 1]; requires bf16[8, 256]"},
      {"a negative clamp",
       {x, sf, go, w, pos, to_pos, out, q, qsf, grad, wg},
       {{"swiglu_clamp_value", -1.0}},
       "swiglu_backward_and_per_token_cast: argument 'swiglu_clamp_value' is "
       "-1; requires a finite value >= 0"},
  };
  return t;
}

} // namespace tilejit::harness
