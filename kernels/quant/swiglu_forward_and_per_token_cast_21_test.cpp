// swiglu_forward_and_per_token_cast_21_test.cpp - the 2.1 form's case
// table: TileKernels' hidden sizes with and without the psum layout, both
// groups, weights and the factor, the clamps and their four counters, the
// three scale layouts, f32 in, a token alignment of 64, many experts,
// tails, no rows, the benchmark shapes, and mistakes. out, out_sf and the
// counters are compared bytewise (rows that are not valid hold quantized
// zeros, as in the reference).
#include "op_test.h"

namespace tilejit::harness {

namespace {

struct Options {
  bool psum = true, weights = false;
  const char *rsf = "0", *clamp = "0";
  bool count = false;
  int64_t group = 128;
  bool col_major = false, round = false, packed = false;
  DType in = DType::bf16;
  int kind = Case::gpu;
};

/// --shape T x 2H x E.
Case forward(int64_t t, int64_t h, int64_t e, const Options &o) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  return {.label = "",
          .shape = {t, 2 * h, e},
          .set = {{"num_per_channels", std::to_string(o.group)},
                  {"psum_num_tokens_per_expert", o.psum ? "passed" : "none"},
                  {"topk_weights", o.weights ? "passed" : "none"},
                  {"routed_scaling_factor", o.rsf},
                  {"clamp_value", o.clamp},
                  {"clamped_count", o.count ? "passed" : "none"},
                  {"use_tma_aligned_col_major_sf", flag(o.col_major)},
                  {"round_sf", flag(o.round)},
                  {"use_packed_ue8m0", flag(o.packed)}},
          .dtypes = {{"x", o.in}},
          .kind = o.kind};
}

} // namespace

TILEJIT_OP_TEST(swiglu_forward_and_per_token_cast_21) {
  OpTest t{.op = "swiglu_forward_and_per_token_cast_21",
           .fills = {{"psum_num_tokens_per_expert", psum("x")},
                     {"topk_weights", uniform(0, 1)}}};
  for (int64_t h : {2048, 2560, 3072, 4096, 6144, 7168})
    for (int64_t group : {32, 128})
      for (const char *clamp : {"0", "10", "0.5"}) {
        const bool count = clamp[0] != '0';
        t.cases.push_back(forward(
            700, h, 8, {.clamp = clamp, .count = count, .group = group}));
        t.cases.push_back(forward(700, h, 8,
                                  {.psum = false,
                                   .weights = true,
                                   .rsf = "2.5",
                                   .clamp = clamp,
                                   .count = count,
                                   .group = group,
                                   .round = true}));
      }
  // The scale layouts: column-major, and packed UE8M0 (rounded).
  for (int64_t group : {32, 128}) {
    t.cases.push_back(forward(
        515, 2048, 8,
        {.weights = true, .group = group, .col_major = true, .round = true}));
    t.cases.push_back(forward(515, 2048, 8,
                              {.weights = true,
                               .clamp = "0.5",
                               .count = true,
                               .group = group,
                               .col_major = true,
                               .round = true,
                               .packed = true}));
  }
  // f32 in; 64-row alignment; many experts; other hidden sizes; few rows,
  // one, none.
  t.cases.push_back(forward(
      333, 1024, 4,
      {.weights = true, .clamp = "0.5", .count = true, .in = DType::f32}));
  Case aligned64 = forward(515, 512, 16, {.clamp = "0.5", .count = true});
  aligned64.set["token_alignment"] = "64";
  t.cases.push_back(aligned64);
  t.cases.push_back(forward(4001, 2048, 256, {.weights = true}));
  t.cases.push_back(forward(300, 1152, 4, {.clamp = "10", .count = true}));
  t.cases.push_back(forward(5, 128, 3, {.clamp = "10", .count = true}));
  t.cases.push_back(forward(1, 128, 1, {.psum = false}));
  t.cases.push_back(forward(0, 2048, 8, {.clamp = "10", .count = true}));
  // A benchmark: 32768 rows of H = 2048 over 32 experts, weighted, packed
  // scales, without and with the clamp 0.5.
  for (const char *clamp : {"0", "0.5"})
    t.cases.push_back(forward(32768, 2048, 32,
                              {.weights = true,
                               .clamp = clamp,
                               .count = clamp[0] != '0',
                               .col_major = true,
                               .round = true,
                               .packed = true,
                               .kind = Case::bench}));

  const auto x = fake(DType::bf16, {8, 512});
  const auto none = ops::absent();
  const auto out = fake(DType::e4m3, {8, 256}, {}, 0x20000);
  const auto sf = fake(DType::f32, {8, 2}, {}, 0x30000);
  const auto count = fake(DType::i64, {4}, {}, 0x40000);
  t.errors = {
      {"a group of 64",
       {x, none, none, out, fake(DType::f32, {8, 4}, {}, 0x30000), none},
       {{"num_per_channels", int64_t{64}}},
       "swiglu_forward_and_per_token_cast_21: argument 'num_per_channels' is "
       "64; requires 32 or 128"},
      {"a factor without weights",
       {x, none, none, out, sf, none},
       {{"routed_scaling_factor", 2.0}},
       "swiglu_forward_and_per_token_cast_21: argument "
       "'routed_scaling_factor' is given while 'topk_weights' is None; "
       "requires weights"},
      {"counts without a clamp",
       {x, none, none, out, sf, count},
       {},
       "swiglu_forward_and_per_token_cast_21: argument 'clamped_count' is "
       "given while 'clamp_value' is None; requires a clamp value"},
      {"too many experts",
       {x, fake(DType::i32, {1025}, {}, 0x50000), none, out, sf, none},
       {},
       "swiglu_forward_and_per_token_cast_21: argument "
       "'psum_num_tokens_per_expert' has 1025 experts; requires at most "
       "1024"},
      {"an alignment of 96",
       {x, none, none, out, sf, none},
       {{"token_alignment", int64_t{96}}},
       "swiglu_forward_and_per_token_cast_21: argument 'token_alignment' is "
       "96; requires a power of two"},
  };
  return t;
}

} // namespace tilejit::harness
