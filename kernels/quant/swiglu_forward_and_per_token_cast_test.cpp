// swiglu_forward_and_per_token_cast_test.cpp - the fused SwiGLU forward's
// case table: TileKernels' hidden sizes with both group sizes and its two
// flag sets, with and without weights, the expert mask, the clamps and
// their counts; a hidden size whose group is padded, tails of rows, no
// rows, f32 in, the benchmark shapes, and mistakes. Data, scales and
// counts are compared bytewise.
#include "op_test.h"
#include "quant/packed_scales_compare.h"

namespace tilejit::harness {

namespace {

struct Options {
  int64_t group = 128;
  bool packed = false; ///< col-major, rounded, packed; else rounded only
  bool weights = false, mask = false;
  const char *clamp = "0"; ///< 0: None
  bool count = false;
  DType in = DType::bf16;
  int kind = Case::gpu;
};

/// --shape E x 2H x T x K.
Case swiglu(int64_t e, int64_t h, const Options &o) {
  Case c{.label = "",
         .shape = {e, 2 * h, std::max<int64_t>(1, e / 2), 4},
         .set = {{"num_per_channels", std::to_string(o.group)},
                 {"round_sf", "true"},
                 {"swiglu_clamp_value", o.clamp},
                 {"pos_to_token_topk", o.weights ? "passed" : "none"},
                 {"topk_weights", o.weights ? "passed" : "none"},
                 {"pos_to_expert", o.mask ? "passed" : "none"},
                 {"clamped_count", o.count ? "passed" : "none"}},
         .dtypes = {{"x", o.in}},
         .kind = o.kind};
  if (o.packed) {
    c.set["use_tma_aligned_col_major_sf"] = "true";
    c.set["use_packed_ue8m0"] = "true";
  }
  return c;
}

} // namespace

TILEJIT_OP_TEST(swiglu_forward_and_per_token_cast) {
  OpTest t{.op = "swiglu_forward_and_per_token_cast",
           .fills = {{"pos_to_token_topk", element_indices("topk_weights")},
                     {"pos_to_expert", row_indices("x", 0.25)}},
           .compare = {{"out_sf", packed_scales([](const ops::HostCall &c) {
                          const int64_t g = c.integer("num_per_channels");
                          return (c.tensor("x").size(1) / 2 + g - 1) / g;
                        })}}};
  // TileKernels' grid over its hidden sizes (H = 1024 tiles 4 x 1024 in
  // the original, the others a row): both groups, both flag sets (no
  // packed scales with weights, none column-major with a group a row),
  // with and without weights and mask, the three clamps, counted where
  // the group is 128.
  for (int64_t h : {1024, 1280, 1536, 2048, 3072, 3584})
    for (int64_t group : {int64_t{128}, h})
      for (bool packed : {false, true})
        for (bool weights : {false, true}) {
          if ((packed && weights) || (packed && group != 128))
            continue;
          for (const char *clamp : {"0", "10", "0.5"})
            t.cases.push_back(
                swiglu(101, h,
                       {.group = group,
                        .packed = packed,
                        .weights = weights,
                        .mask = !weights,
                        .clamp = clamp,
                        .count = group == 128 && clamp[0] != '0'}));
        }
  // Mask and weights together, f32 in, a padded group (H = 1152 = 9 x
  // 128: 2048), a group of 7168, many rows, one row, none.
  t.cases.push_back(
      swiglu(77, 2048,
             {.weights = true, .mask = true, .clamp = "0.5", .count = true}));
  t.cases.push_back(
      swiglu(33, 1024, {.weights = true, .mask = true, .in = DType::f32}));
  t.cases.push_back(
      swiglu(45, 1536, {.group = 1536, .clamp = "10", .in = DType::f32}));
  t.cases.push_back(swiglu(21, 1152, {.group = 1152, .mask = true}));
  t.cases.push_back(swiglu(9, 7168, {.group = 7168, .weights = true}));
  t.cases.push_back(
      swiglu(4001, 2048,
             {.packed = true, .mask = true, .clamp = "0.5", .count = true}));
  t.cases.push_back(
      swiglu(1, 128, {.mask = true, .clamp = "0.5", .count = true}));
  t.cases.push_back(swiglu(0, 1024, {.clamp = "10", .count = true}));
  // TileKernels' benchmark: 33757 rows of H = 2048 (its bytes), the expert
  // mask, packed scales, with and without the clamp 0.5.
  for (const char *clamp : {"0", "0.5"}) {
    Case c = swiglu(
        33757, 2048,
        {.packed = true, .mask = true, .clamp = clamp, .kind = Case::bench});
    c.shape[2] = 32008;
    c.shape[3] = 8;
    c.peer_us = clamp[1] ? 129.58 : 96.17;
    t.cases.push_back(c);
  }

  const auto x = fake(DType::bf16, {8, 2048});
  const auto none = ops::absent();
  const auto out = fake(DType::e4m3, {8, 1024}, {}, 0x100000);
  const auto sf = fake(DType::f32, {8, 8}, {}, 0x200000);
  const auto pos = fake(DType::i32, {8}, {}, 0x300000);
  const auto count = fake(DType::i64, {3}, {}, 0x400000);
  t.errors = {
      {"a group of 64",
       {x, none, none, none, out, fake(DType::f32, {8, 16}, {}, 0x200000),
        none},
       {{"num_per_channels", int64_t{64}}},
       "swiglu_forward_and_per_token_cast: argument 'num_per_channels' is "
       "64; requires 128 or H = 1024"},
      {"column-major scales of a group a row",
       {x, none, none, none, out, fake(DType::f32, {8, 1}, {1, 8}, 0x200000),
        none},
       {{"num_per_channels", int64_t{1024}},
        {"use_tma_aligned_col_major_sf", true}},
       "swiglu_forward_and_per_token_cast: argument "
       "'use_tma_aligned_col_major_sf' is true with num_per_channels = 1024; "
       "requires num_per_channels == 128"},
      {"positions without weights",
       {x, pos, none, none, out, sf, none},
       {},
       "swiglu_forward_and_per_token_cast: argument 'topk_weights' is None "
       "while 'pos_to_token_topk' is given; requires both"},
      {"counts without a clamp",
       {x, none, none, none, out, sf, count},
       {},
       "swiglu_forward_and_per_token_cast: argument 'clamped_count' is given "
       "while 'swiglu_clamp_value' is None; requires a clamp value"},
      {"a hidden size not a multiple of 128",
       {fake(DType::bf16, {8, 2112}), none, none, none,
        fake(DType::e4m3, {8, 1056}, {}, 0x100000), sf, none},
       {},
       "swiglu_forward_and_per_token_cast: argument 'x' has shape [8, 2112] "
       "(W = 2112); requires W >= 256 and W a multiple of 256"},
      {"a negative clamp",
       {x, none, none, none, out, sf, none},
       {{"swiglu_clamp_value", -1.0}},
       "swiglu_forward_and_per_token_cast: argument 'swiglu_clamp_value' is "
       "-1; requires a finite value >= 0"},
  };
  return t;
}

} // namespace tilejit::harness
