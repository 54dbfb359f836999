// swiglu_backward_test.cpp - TileKernels 2.1's plain swiglu_backward's case
// table: its hidden sizes with and without the psum layout, weights (and
// the routed scaling factor), the clamps, act_out, both output formats, f32
// in, a token alignment of 64, chunks of 128 and 64 columns, tails, no
// rows, the benchmark shapes, and mistakes. x_grad and act_out are
// compared bytewise (the kernel's Newton step is the reference's too);
// weight_grad, a sum in another order, with rtol = atol = 1e-4.
#include "op_test.h"

namespace tilejit::harness {

namespace {

struct Options {
  bool psum = true, weights = false, recompute = false;
  const char *rsf = "0", *clamp = "0";
  const char *fmt = "bf16";
  DType in = DType::bf16;
  int kind = Case::gpu;
};

/// --shape T x 2H x E.
Case backward(int64_t t, int64_t h, int64_t e, const Options &o) {
  return {.label = "",
          .shape = {t, 2 * h, e},
          .set = {{"fmt", o.fmt},
                  {"psum_num_tokens_per_expert", o.psum ? "passed" : "none"},
                  {"topk_weights", o.weights ? "passed" : "none"},
                  {"weight_grad", o.weights ? "passed" : "none"},
                  {"act_out", o.recompute ? "passed" : "none"},
                  {"routed_scaling_factor", o.rsf},
                  {"clamp_value", o.clamp}},
          .dtypes = {{"x", o.in}, {"act_x_grad", o.in}},
          .kind = o.kind};
}

} // namespace

TILEJIT_OP_TEST(swiglu_backward) {
  OpTest t{.op = "swiglu_backward",
           .fills = {{"psum_num_tokens_per_expert", psum("x")},
                     {"topk_weights", uniform(0, 1)}},
           .compare = {{"weight_grad", allclose(1e-4, 1e-4)}},
           // Every entry of every output is written (padding rows: 0).
           .poison_outputs = true};
  for (int64_t h : {576, 2048, 2560, 3072, 4096, 6144, 7168})
    for (bool psum : {false, true})
      for (const char *clamp : {"0", "10", "0.5"}) {
        t.cases.push_back(backward(700, h, 8, {.psum = psum, .clamp = clamp}));
        t.cases.push_back(backward(700, h, 8,
                                   {.psum = psum,
                                    .weights = true,
                                    .recompute = true,
                                    .rsf = "2.5",
                                    .clamp = clamp,
                                    .fmt = "fp32"}));
      }
  // act_out without weights, weights without act_out or a factor; f32 in
  // (to bf16 and f32 out); 64-row alignment; many experts; one row; none.
  t.cases.push_back(backward(300, 1024, 4, {.recompute = true}));
  t.cases.push_back(backward(300, 1024, 4, {.weights = true, .clamp = "0.5"}));
  t.cases.push_back(backward(
      333, 1024, 4,
      {.weights = true, .recompute = true, .clamp = "0.5", .in = DType::f32}));
  t.cases.push_back(backward(
      333, 640, 4,
      {.weights = true, .recompute = true, .fmt = "fp32", .in = DType::f32}));
  Case aligned64 = backward(515, 512, 16, {.weights = true, .clamp = "0.5"});
  // The fill aligns segments to 128: with 64 some padding rows are not.
  aligned64.set["token_alignment"] = "64";
  t.cases.push_back(aligned64);
  t.cases.push_back(
      backward(4001, 2048, 256, {.weights = true, .recompute = true}));
  t.cases.push_back(backward(5, 128, 3, {.weights = true, .clamp = "10"}));
  t.cases.push_back(backward(1, 64, 1, {.psum = false, .weights = true}));
  t.cases.push_back(backward(0, 2048, 8, {.weights = true}));
  // A benchmark: 32768 rows of H = 2048 over 32 experts, weighted, with the
  // activation recomputed, without and with the clamp 0.5 (TileKernels 2.1
  // has no figure of its own here).
  for (const char *clamp : {"0", "0.5"})
    t.cases.push_back(backward(32768, 2048, 32,
                               {.weights = true,
                                .recompute = true,
                                .clamp = clamp,
                                .kind = Case::bench}));

  const auto x = fake(DType::bf16, {8, 256});
  const auto g = fake(DType::bf16, {8, 128}, {}, 0x10000);
  const auto none = ops::absent();
  const auto w = fake(DType::f32, {8}, {}, 0x20000);
  const auto grad = fake(DType::bf16, {8, 256}, {}, 0x30000);
  const auto wg = fake(DType::f32, {8}, {}, 0x40000);
  t.errors = {
      {"a factor without weights",
       {x, g, none, none, grad, none, none},
       {{"routed_scaling_factor", 2.0}},
       "swiglu_backward: argument 'routed_scaling_factor' is given while "
       "'topk_weights' is None; requires weights"},
      {"weights without weight_grad",
       {x, g, none, w, grad, none, none},
       {},
       "swiglu_backward: argument 'topk_weights' is given while "
       "'weight_grad' is None; requires both or neither"},
      {"weight_grad without weights",
       {x, g, none, none, grad, wg, none},
       {},
       "swiglu_backward: argument 'weight_grad' is given while "
       "'topk_weights' is None; requires both or neither"},
      {"act_x_grad of another dtype",
       {x, fake(DType::f32, {8, 128}, {}, 0x10000), none, none, grad, none,
        none},
       {},
       "swiglu_backward: argument 'act_x_grad' is f32[8, 128] strides [128, "
       "1]; requires bf16[8, 128]"},
      {"too many experts",
       {x, g, fake(DType::i32, {513}, {}, 0x50000), none, grad, none, none},
       {},
       "swiglu_backward: argument 'psum_num_tokens_per_expert' has 513 "
       "experts; requires at most 512"},
      {"an alignment of 96",
       {x, g, none, none, grad, none, none},
       {{"token_alignment", int64_t{96}}},
       "swiglu_backward: argument 'token_alignment' is 96; requires a power "
       "of two"},
  };
  return t;
}

} // namespace tilejit::harness
