// swiglu_backward_and_per_token_cast_21_test.cpp - TileKernels 2.1's FP8
// swiglu_backward_and_per_token_cast's case table: its hidden sizes with
// both groups of x's scales and of the cast, the three scale layouts, the
// clamps in turn, with and without the psum layout, weights (and the
// routed scaling factor) and act_out, f32 act_x_grad, a token alignment of 64,
// chunks of 128 and 64 columns, no rows, the benchmark shapes, and mistakes.
// x_grad, act_out and the e4m3 gradient with its scales are compared bytewise;
// weight_grad, a sum in another order, with rtol = atol = 1e-4.
#include "op_test.h"

namespace tilejit::harness {

namespace {

struct Options {
  int64_t x_group = 128, group = 128;
  bool col_major = false, round_sf = false, packed = false;
  bool psum = true, weights = true, recompute = true;
  const char *rsf = "0", *clamp = "0";
  DType grad = DType::bf16;
  int kind = Case::gpu;
};

const char *text(bool b) { return b ? "true" : "false"; }

/// --shape T x 2H x E.
Case backward(int64_t t, int64_t h, int64_t e, const Options &o) {
  return {.label = "",
          .shape = {t, 2 * h, e},
          .set = {{"x_sf_group", std::to_string(o.x_group)},
                  {"num_per_channels", std::to_string(o.group)},
                  {"use_tma_aligned_col_major_sf", text(o.col_major)},
                  {"round_sf", text(o.round_sf)},
                  {"use_packed_ue8m0", text(o.packed)},
                  {"psum_num_tokens_per_expert", o.psum ? "passed" : "none"},
                  {"topk_weights", o.weights ? "passed" : "none"},
                  {"weight_grad", o.weights ? "passed" : "none"},
                  {"act_out", o.recompute ? "passed" : "none"},
                  {"routed_scaling_factor", o.rsf},
                  {"clamp_value", o.clamp}},
          .dtypes = {{"act_x_grad", o.grad}},
          .kind = o.kind};
}

} // namespace

TILEJIT_OP_TEST(swiglu_backward_and_per_token_cast_21) {
  // x: e4m3 codes of values around 120, scales 0.002 to 0.02 (l, r of a
  // few units, as TileKernels' randn through a cast).
  OpTest t{.op = "swiglu_backward_and_per_token_cast_21",
           .fills = {{"x", normal(0, 120)},
                     {"x_sf", uniform(0.002, 0.02)},
                     {"psum_num_tokens_per_expert", psum("x")},
                     {"topk_weights", uniform(0, 1)}},
           .compare = {{"weight_grad", allclose(1e-4, 1e-4)}},
           // Every entry of every output is written (padding rows: 0).
           .poison_outputs = true};
  // The hidden sizes, each with its pair of groups, the three layouts and
  // a clamp in turn; the psum layout and weights on every other one. (Each
  // case's reference takes CUDA's expf of every distinct l: millions for
  // a dequantized x, where bf16 has 65536; so few rows.)
  const int64_t hs[] = {2048, 2560, 3072, 4096, 6144, 7168};
  const char *clamps[] = {"0", "10", "0.5"};
  for (int i = 0; i < 6; ++i)
    for (int layout = 0; layout < 3; ++layout) {
      Options o{.x_group = i % 2 ? 32 : 128,
                .group = i % 3 ? 128 : 32,
                .col_major = layout > 0,
                .round_sf = layout == 2 || i % 2 == 1,
                .packed = layout == 2,
                .psum = i % 2 == 0,
                .weights = layout != 1,
                .recompute = layout != 0,
                .rsf = layout == 2 ? "2.5" : "0",
                .clamp = clamps[(i + layout) % 3]};
      t.cases.push_back(backward(160, hs[i], 8, o));
    }
  // f32 act_x_grad; no weights or act_out; 64-row alignment; many
  // experts; chunks of 128 and 64 columns; one row; none.
  t.cases.push_back(backward(333, 1024, 4, {.grad = DType::f32}));
  t.cases.push_back(backward(
      300, 1024, 4, {.x_group = 32, .weights = false, .recompute = false}));
  Case aligned64 = backward(515, 512, 16, {.clamp = "0.5"});
  // The fill aligns segments to 128: with 64 some padding rows are not.
  aligned64.set["token_alignment"] = "64";
  t.cases.push_back(aligned64);
  t.cases.push_back(backward(
      4001, 2048, 256, {.col_major = true, .round_sf = true, .packed = true}));
  t.cases.push_back(backward(77, 640, 3,
                             {.group = 32,
                              .col_major = true,
                              .round_sf = true,
                              .packed = true,
                              .clamp = "0.5"}));
  t.cases.push_back(backward(45, 384, 3, {.x_group = 32, .group = 32}));
  t.cases.push_back(backward(
      45, 576, 3,
      {.x_group = 32, .group = 32, .col_major = true, .round_sf = true}));
  // Packed with two scales a chunk: a part of a word each store.
  t.cases.push_back(backward(45, 576, 3,
                             {.x_group = 32,
                              .group = 32,
                              .col_major = true,
                              .round_sf = true,
                              .packed = true}));
  t.cases.push_back(backward(1, 128, 1, {.psum = false}));
  t.cases.push_back(backward(0, 2048, 8, {}));
  // A benchmark: 32768 rows of H = 2048 over 32 experts, weighted, with the
  // activation recomputed, groups of 128, packed scales, without and with
  // the clamp 0.5 (TileKernels 2.1 has no figure of its own here).
  for (const char *clamp : {"0", "0.5"})
    t.cases.push_back(backward(32768, 2048, 32,
                               {.col_major = true,
                                .round_sf = true,
                                .packed = true,
                                .clamp = clamp,
                                .kind = Case::bench}));

  const auto x = fake(DType::e4m3, {8, 256});
  const auto sf = fake(DType::f32, {8, 2}, {}, 0x10000);
  const auto g = fake(DType::bf16, {8, 128}, {}, 0x20000);
  const auto none = ops::absent();
  const auto grad = fake(DType::bf16, {8, 256}, {}, 0x30000);
  const auto q = fake(DType::e4m3, {8, 256}, {}, 0x40000);
  const auto qsf = fake(DType::f32, {8, 2}, {}, 0x50000);
  t.errors = {
      {"a cast group of 64",
       {x, sf, g, none, none, grad, q, fake(DType::f32, {8, 4}, {}, 0x50000),
        none, none},
       {{"num_per_channels", int64_t{64}}},
       "swiglu_backward_and_per_token_cast_21: argument 'num_per_channels' "
       "is 64; requires 32 or 128"},
      {"scales of 64 channels",
       {x, fake(DType::f32, {8, 4}, {}, 0x10000), g, none, none, grad, q, qsf,
        none, none},
       {{"x_sf_group", int64_t{64}}},
       "swiglu_backward_and_per_token_cast_21: argument 'x_sf_group' is 64; "
       "requires 32 or 128"},
      {"a hidden size not a multiple of the group",
       {fake(DType::e4m3, {8, 384}), fake(DType::f32, {8, 12}, {}, 0x10000),
        fake(DType::bf16, {8, 192}, {}, 0x20000), none, none,
        fake(DType::bf16, {8, 384}, {}, 0x30000),
        fake(DType::e4m3, {8, 384}, {}, 0x40000),
        fake(DType::f32, {8, 3}, {}, 0x50000), none, none},
       {{"x_sf_group", int64_t{32}}},
       "swiglu_backward_and_per_token_cast_21: argument 'num_per_channels' "
       "is 128; requires it to divide H = 192"},
      {"packed scales not rounded",
       {x, sf, g, none, none, grad, q, fake(DType::i32, {8, 1}, {8 * 0, 8}),
        none, none},
       {{"use_tma_aligned_col_major_sf", true}, {"use_packed_ue8m0", true}},
       "swiglu_backward_and_per_token_cast_21: argument 'use_packed_ue8m0' "
       "is true; requires use_tma_aligned_col_major_sf and round_sf"},
      {"a factor without weights",
       {x, sf, g, none, none, grad, q, qsf, none, none},
       {{"routed_scaling_factor", 2.0}},
       "swiglu_backward_and_per_token_cast_21: argument "
       "'routed_scaling_factor' is given while 'topk_weights' is None; "
       "requires weights"},
  };
  return t;
}

} // namespace tilejit::harness
