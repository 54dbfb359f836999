// per_channel_cast_test.cpp - The case tables of per_channel_cast and
// per_channel_cast_and_transpose: bf16 and f32, rounded and not, 32- and
// 128-row scales, tails of columns, size 0, TileKernels' test grids, their
// benchmark shapes, and mistakes; 2.1's forms of per_channel_cast (a
// quantized x, column-pack scales). Data and scales are compared bytewise.
#include "op_test.h"
#include "quant/packed_scales_compare.h"

namespace tilejit::harness {

namespace {

using Set = std::map<std::string, std::string>;

Set with(int64_t num_per_tokens, bool round_sf) {
  return {{"num_per_tokens", std::to_string(num_per_tokens)},
          {"round_sf", round_sf ? "true" : "false"}};
}

/// Small cases and TileKernels' grid (M 4096 and 8064, its seven K).
void add_cases(OpTest &t, std::vector<DType> dtypes,
               std::vector<int64_t> num_per_tokens, double peer_us) {
  for (DType dtype : dtypes)
    for (int64_t bm : num_per_tokens)
      for (bool round_sf : {false, true}) {
        for (auto [m, k] : {std::pair<int64_t, int64_t>{128, 64},
                            {256, 576},
                            {384, 1088},
                            {0, 128}})
          t.cases.push_back({.shape = {m, k},
                             .set = with(bm, round_sf),
                             .dtypes = {{"", dtype}}});
        for (int64_t m : {4096, 8064})
          for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
            t.cases.push_back({.shape = {m, k},
                               .set = with(bm, round_sf),
                               .dtypes = {{"", dtype}},
                               .kind = Case::big});
      }
  t.cases.push_back({.shape = {8064, 7168},
                     .set = with(128, true),
                     .kind = Case::bench,
                     .peer_us = peer_us});
}

/// 2.1's per_channel_cast of a quantized x: e4m3 with scales of 1 x g in
/// `layout` 0 f32 row-major, 1 f32 column-major, 2 packed UE8M0, 3 e4m3.
Case quantized(int64_t m, int64_t k, int64_t bm, int64_t g, int layout,
               bool packed_out, int kind = Case::gpu) {
  Set set = with(bm, true);
  set["x_sf"] = "passed";
  set["num_per_channels"] = std::to_string(g);
  set["use_packed_ue8m0"] = packed_out ? "true" : "false";
  Case c{.shape = {m, k},
         .set = set,
         .dtypes = {{"x", DType::e4m3}},
         .kind = kind};
  if (layout == 1)
    c.strides = {{"x_sf", {1, (m + 3) / 4 * 4}}};
  if (layout == 2)
    c.dtypes["x_sf"] = DType::i32;
  if (layout == 3)
    c.dtypes["x_sf"] = DType::e4m3;
  return c;
}

} // namespace

TILEJIT_OP_TEST(per_channel_cast) {
  // A quantized x's scales: f32 of 2^-10 .. 1, e4m3 of normal values,
  // packed UE8M0 codes of 2^-27 .. 2^27.
  OpTest t{.op = "per_channel_cast",
           .fills = {{"x_sf:f32", uniform(1e-3, 1.0)},
                     {"x_sf:e4m3", uniform(1e-2, 2.0)},
                     {"x_sf:i32", bytes_in(100, 154)}},
           .compare = {{"out_sf", col_packed_scales([](const ops::HostCall &c) {
                          return c.tensor("x").size(0) /
                                 c.integer("num_per_tokens");
                        })}}};
  add_cases(t, {DType::bf16, DType::f32}, {128}, 45.38);
  // 2.1 (K % 128 == 0): 32 rows a scale, column-pack scales of a plain x
  // (blocks 4q .. 4q + 3 from 1 to 8 tiles), a quantized x in every scale
  // layout (256-column tiles with a tail of 128), size 0, TileKernels'
  // grid.
  for (DType dtype : {DType::bf16, DType::f32})
    for (int64_t bm : {32, 128})
      for (int flags = 0; flags < 3; ++flags) // plain, rounded, packed
        for (auto [m, k] : {std::pair<int64_t, int64_t>{128, 128},
                            {384, 640},
                            {1024, 256},
                            {0, 128}}) {
          Set set = with(bm, flags > 0);
          set["use_packed_ue8m0"] = flags == 2 ? "true" : "false";
          if (bm == 128 && flags < 2)
            continue; // 1.0's form: add_cases
          t.cases.push_back(
              {.shape = {m, k}, .set = set, .dtypes = {{"", dtype}}});
        }
  for (int64_t m : {4096, 8064})
    for (int64_t k : {2048, 2560, 3072, 4096, 6144, 7168}) {
      Set set = with(32, true);
      set["use_packed_ue8m0"] = k % 4096 == 0 ? "true" : "false";
      t.cases.push_back({.shape = {m, k}, .set = set, .kind = Case::big});
    }
  for (int64_t bm : {32, 128})
    for (int64_t g : {32, 128})
      for (int layout = 0; layout < 4; ++layout)
        for (bool packed : {false, true}) {
          t.cases.push_back(quantized(384, 640, bm, g, layout, packed));
          t.cases.push_back(quantized(128, 256, bm, g, layout, packed));
        }
  t.cases.push_back(quantized(0, 256, 128, 128, 0, false));
  for (int64_t m : {4096, 8064})
    for (int64_t k : {2048, 4096, 7168})
      for (int64_t bm : {32, 128}) {
        t.cases.push_back(quantized(m, k, bm, 128, 2, true, Case::big));
        t.cases.push_back(quantized(m, k, bm, 32, 0, false, Case::big));
      }
  t.cases.push_back(quantized(8064, 7168, 32, 128, 2, true, Case::bench));
  Set col_pack = with(32, true);
  col_pack["use_packed_ue8m0"] = "true";
  t.cases.push_back(
      {.shape = {8064, 7168}, .set = col_pack, .kind = Case::bench});

  const auto x = fake(DType::bf16, {256, 512});
  const auto q = fake(DType::e4m3, {256, 512});
  const auto x_sf = fake(DType::f32, {256, 4}, {}, 0x300000);
  const auto out = fake(DType::e4m3, {256, 512}, {}, 0x100000);
  const auto sf = fake(DType::f32, {2, 512}, {}, 0x200000);
  const auto none = ops::absent();
  t.errors = {
      {"64 rows a scale",
       {x, none, out, fake(DType::f32, {4, 512}, {}, 0x200000)},
       {{"num_per_tokens", int64_t{64}}},
       "per_channel_cast: argument 'num_per_tokens' is 64; requires 32 or "
       "128"},
      {"M not a multiple of 128",
       {fake(DType::bf16, {200, 512}), none, fake(DType::e4m3, {200, 512}), sf},
       {},
       "per_channel_cast: argument 'x' has shape [200, 512] (M = 200); "
       "requires M a multiple of 128"},
      {"scales of another shape",
       {x, none, out, fake(DType::f32, {1, 512}, {}, 0x200000)},
       {},
       "per_channel_cast: argument 'out_sf' is f32[1, 512] strides [512, 1]; "
       "requires f32[2, 512]"},
      {"e4m3 without its scales",
       {q, none, out, sf},
       {},
       "per_channel_cast: argument 'x' is e4m3 without x_sf; requires bf16 "
       "or f32 without x_sf (e4m3 comes with its scales)"},
      {"bf16 with scales",
       {x, x_sf, out, sf},
       {{"num_per_channels", int64_t{128}}},
       "per_channel_cast: argument 'x' is bf16 with x_sf; requires e4m3 with "
       "x_sf"},
      {"scales of 64 columns",
       {q, fake(DType::f32, {256, 8}, {}, 0x300000), out, sf},
       {{"num_per_channels", int64_t{64}}},
       "per_channel_cast: argument 'num_per_channels' is 64 with x_sf; "
       "requires 32 or 128"},
      {"a group without scales",
       {x, none, out, sf},
       {{"num_per_channels", int64_t{128}}},
       "per_channel_cast: argument 'num_per_channels' is 128 without x_sf; "
       "requires 0 (None)"},
      {"packed scales not rounded",
       {x, none, out, fake(DType::i32, {1, 512}, {}, 0x200000)},
       {{"use_packed_ue8m0", true}},
       "per_channel_cast: argument 'use_packed_ue8m0' is true; requires "
       "round_sf"},
      {"2.1's form with K = 576",
       {fake(DType::bf16, {256, 576}), none, fake(DType::e4m3, {256, 576}),
        fake(DType::f32, {8, 576}, {}, 0x200000)},
       {{"num_per_tokens", int64_t{32}}},
       "per_channel_cast: argument 'x' has K = 576 columns; with "
       "num_per_tokens 32 (TileKernels 2.1's form) requires a multiple of "
       "128"},
      {"x_sf of another shape",
       {q, fake(DType::f32, {256, 2}, {}, 0x300000), out, sf},
       {{"num_per_channels", int64_t{128}}},
       "per_channel_cast: argument 'x_sf' is f32[256, 2] strides [2, 1]; "
       "requires f32[256, 4]"},
      {"f32 column-pack scales",
       {x, none, out, sf},
       {{"use_packed_ue8m0", true}, {"round_sf", true}},
       "per_channel_cast: argument 'out_sf' is f32[2, 512] strides [512, 1]; "
       "requires i32[1, 512]"},
  };
  return t;
}

TILEJIT_OP_TEST(per_channel_cast_and_transpose) {
  OpTest t{.op = "per_channel_cast_and_transpose"};
  add_cases(t, {DType::bf16}, {32, 128}, 44.85);
  const auto x = fake(DType::bf16, {256, 512});
  const auto sf = fake(DType::f32, {2, 512}, {}, 0x200000);
  t.errors = {
      {"an untransposed out",
       {x, fake(DType::e4m3, {256, 512}, {}, 0x100000), sf},
       {},
       "per_channel_cast_and_transpose: argument 'out' has shape [256, 512]; "
       "requires [K, M] = [512, 256]"},
      {"64 rows a scale",
       {x, fake(DType::e4m3, {512, 256}, {}, 0x100000),
        fake(DType::f32, {4, 512}, {}, 0x200000)},
       {{"num_per_tokens", int64_t{64}}},
       "per_channel_cast_and_transpose: argument 'num_per_tokens' is 64; "
       "requires 32 or 128"},
      {"an f32 x",
       {fake(DType::f32, {256, 512}), fake(DType::e4m3, {512, 256}), sf},
       {},
       "per_channel_cast_and_transpose: argument 'x' has dtype f32; requires "
       "bf16"},
  };
  return t;
}

} // namespace tilejit::harness

namespace tilejit::harness {

namespace {

/// per_channel_cast_fused's case: --shape R x N x K, x_sf and pos_to_token
/// passed or left out.
Case fused(std::vector<int64_t> shape, bool x_sf, bool pos, bool round_sf,
           int kind = Case::gpu) {
  Set set = with(128, round_sf);
  set["x_sf"] = x_sf ? "passed" : "none";
  if (x_sf)
    set["num_per_channels"] = "128";
  if (!pos)
    set["pos_to_token"] = "none";
  return {.shape = std::move(shape),
          .set = set,
          .dtypes = {{"", x_sf ? DType::e4m3 : DType::bf16}},
          .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(per_channel_cast_fused) {
  OpTest t{.op = "per_channel_cast_fused",
           .fills = {{"x_sf", uniform(0.01, 2.0)},
                     {"pos_to_token", row_indices("x")}}};
  for (bool round_sf : {false, true})
    for (bool x_sf : {false, true}) {
      const int64_t k = x_sf ? 640 : 576; // a tail of columns
      t.cases.push_back(fused({256, 256, k}, x_sf, false, round_sf));
      t.cases.push_back(fused({144, 300, k}, x_sf, true, round_sf));
      t.cases.push_back(fused({16, 0, k}, x_sf, true, round_sf));
      t.cases.push_back(fused({0, 128, k}, x_sf, true, round_sf));
      for (int64_t K : {2048, 2560, 3072, 4096, 6144, 7168}) {
        t.cases.push_back(
            fused({4096, 4096, K}, x_sf, false, round_sf, Case::big));
        t.cases.push_back(
            fused({8192, 4096, K}, x_sf, true, round_sf, Case::big));
      }
    }
  Case f32 = fused({256, 256, 576}, false, true, false);
  f32.dtypes = {{"", DType::f32}};
  t.cases.push_back(f32);
  Case bench = fused({4096, 4096, 7168}, false, false, true, Case::bench);
  bench.peer_us = 23.24;
  t.cases.push_back(bench);
  t.cases.push_back(fused({28672, 28672, 7168}, true, true, true, Case::bench));

  const auto x = fake(DType::bf16, {256, 512});
  const auto q = fake(DType::e4m3, {256, 512});
  const auto x_sf = fake(DType::f32, {256, 4}, {}, 0x300000);
  const auto pos = fake(DType::i32, {256}, {}, 0x400000);
  const auto out = fake(DType::e4m3, {256, 512}, {}, 0x100000);
  const auto sf = fake(DType::f32, {2, 512}, {}, 0x200000);
  const auto none = ops::absent();
  t.errors = {
      {"e4m3 without its scales",
       {q, none, pos, out, sf},
       {},
       "per_channel_cast_fused: argument 'x' is e4m3 without x_sf; requires "
       "bf16 or f32 without x_sf (e4m3 comes with its scales)"},
      {"bf16 with scales",
       {x, x_sf, pos, out, sf},
       {{"num_per_channels", int64_t{128}}},
       "per_channel_cast_fused: argument 'x' is bf16 with x_sf; requires e4m3 "
       "with x_sf"},
      {"scales of 64 columns",
       {q, x_sf, pos, out, sf},
       {{"num_per_channels", int64_t{64}}},
       "per_channel_cast_fused: argument 'num_per_channels' is 64 with x_sf; "
       "requires 128"},
      {"a group without scales",
       {x, none, pos, out, sf},
       {{"num_per_channels", int64_t{128}}},
       "per_channel_cast_fused: argument 'num_per_channels' is 128 without "
       "x_sf; requires 0 (None)"},
      {"pos_to_token of 100 entries",
       {x, none, fake(DType::i32, {100}, {}, 0x400000),
        fake(DType::e4m3, {100, 512}, {}, 0x100000), sf},
       {},
       "per_channel_cast_fused: argument 'pos_to_token' has 100 entries; "
       "requires a multiple of 16"},
      {"fewer rows out than in without pos_to_token",
       {x, none, none, fake(DType::e4m3, {128, 512}, {}, 0x100000),
        fake(DType::f32, {1, 512}, {}, 0x200000)},
       {},
       "per_channel_cast_fused: argument 'out' has 128 rows and x 256; "
       "without pos_to_token requires the same rows, a multiple of 128"},
      {"x left out",
       {none, none, pos, out, sf},
       {},
       "per_channel_cast_fused: argument 'x' is absent; requires a tensor "
       "(only 'x_sf' or 'pos_to_token' may be left out)"},
      {"scales of another shape",
       {q, fake(DType::f32, {256, 2}, {}, 0x300000), pos, out, sf},
       {{"num_per_channels", int64_t{128}}},
       "per_channel_cast_fused: argument 'x_sf' is f32[256, 2] strides [2, "
       "1]; requires f32[256, 4]"},
  };
  return t;
}

} // namespace tilejit::harness
