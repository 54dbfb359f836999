// swiglu_forward_test.cpp - TileKernels 2.1's plain swiglu_forward's case
// table: its hidden sizes with and without the psum layout, weights (and
// the routed scaling factor), the clamps and their counters, both output
// formats, f32 in, a token alignment of 64, tails, no rows, the benchmark
// shapes, and mistakes. out and the counters are compared bytewise (rows
// outside the layout stay as the zero-filled output had them, as the
// reference's zeros).
#include "op_test.h"

namespace tilejit::harness {

namespace {

struct Options {
  bool psum = true, weights = false;
  const char *rsf = "0", *clamp = "0";
  bool count = false;
  const char *fmt = "bf16";
  DType in = DType::bf16;
  int kind = Case::gpu;
};

/// --shape T x 2H x E.
Case forward(int64_t t, int64_t h, int64_t e, const Options &o) {
  return {.label = "",
          .shape = {t, 2 * h, e},
          .set = {{"fmt", o.fmt},
                  {"psum_num_tokens_per_expert", o.psum ? "passed" : "none"},
                  {"topk_weights", o.weights ? "passed" : "none"},
                  {"routed_scaling_factor", o.rsf},
                  {"clamp_value", o.clamp},
                  {"clamped_count", o.count ? "passed" : "none"}},
          .dtypes = {{"x", o.in}},
          .kind = o.kind};
}

} // namespace

TILEJIT_OP_TEST(swiglu_forward) {
  OpTest t{.op = "swiglu_forward",
           .fills = {{"psum_num_tokens_per_expert", psum("x")},
                     {"topk_weights", uniform(0, 1)}}};
  for (int64_t h : {576, 2048, 2560, 3072, 4096, 6144, 7168})
    for (bool psum : {false, true})
      for (const char *clamp : {"0", "10", "0.5"}) {
        const bool count = clamp[0] != '0';
        t.cases.push_back(
            forward(700, h, 8, {.psum = psum, .clamp = clamp, .count = count}));
        t.cases.push_back(forward(700, h, 8,
                                  {.psum = psum,
                                   .weights = true,
                                   .rsf = "2.5",
                                   .clamp = clamp,
                                   .count = count,
                                   .fmt = "fp32"}));
      }
  // f32 in, weights without a factor, 64-row alignment, many experts, few
  // rows, one row, none.
  t.cases.push_back(forward(
      333, 1024, 4,
      {.weights = true, .clamp = "0.5", .count = true, .in = DType::f32}));
  Case aligned64 = forward(515, 512, 16, {.clamp = "0.5", .count = true});
  aligned64.set["token_alignment"] = "64";
  // The fill aligns segments to 128, so 64 leaves rows valid that 128 made
  // padding: the kernel follows the parameter, as the reference does.
  t.cases.push_back(aligned64);
  t.cases.push_back(forward(4001, 2048, 256, {.weights = true}));
  t.cases.push_back(forward(5, 128, 3, {.clamp = "10", .count = true}));
  // Rows of 2 x 32768 elements: the counts no longer fit 16-bit halves.
  t.cases.push_back(forward(5, 32768, 2, {.clamp = "0.5", .count = true}));
  t.cases.push_back(forward(1, 64, 1, {.psum = false}));
  t.cases.push_back(forward(0, 2048, 8, {.clamp = "10", .count = true}));
  // A benchmark: 32768 rows of H = 2048 over 32 experts, weighted, with and
  // without the clamp 0.5 (TileKernels 2.1 has no figure of its own here).
  for (const char *clamp : {"0", "0.5"})
    t.cases.push_back(forward(32768, 2048, 32,
                              {.weights = true,
                               .clamp = clamp,
                               .count = clamp[0] != '0',
                               .kind = Case::bench}));

  const auto x = fake(DType::bf16, {8, 256});
  const auto none = ops::absent();
  const auto out = fake(DType::bf16, {8, 128}, {}, 0x20000);
  const auto count = fake(DType::i64, {4}, {}, 0x30000);
  t.errors = {
      {"a factor without weights",
       {x, none, none, out, none},
       {{"routed_scaling_factor", 2.0}},
       "swiglu_forward: argument 'routed_scaling_factor' is given while "
       "'topk_weights' is None; requires weights"},
      {"counts without a clamp",
       {x, none, none, out, count},
       {},
       "swiglu_forward: argument 'clamped_count' is given while "
       "'clamp_value' is None; requires a clamp value"},
      {"too many experts",
       {x, fake(DType::i32, {513}, {}, 0x40000), none, out, none},
       {},
       "swiglu_forward: argument 'psum_num_tokens_per_expert' has 513 "
       "experts; requires at most 512"},
      {"an alignment of 96",
       {x, none, none, out, none},
       {{"token_alignment", int64_t{96}}},
       "swiglu_forward: argument 'token_alignment' is 96; requires a power "
       "of two"},
      {"a hidden size not a multiple of 64",
       {fake(DType::bf16, {8, 160}), none, none,
        fake(DType::bf16, {8, 80}, {}, 0x20000), none},
       {},
       "swiglu_forward: argument 'x' has shape [8, 160] (W = 160); requires "
       "W >= 128 and W a multiple of 128"},
  };
  return t;
}

} // namespace tilejit::harness
