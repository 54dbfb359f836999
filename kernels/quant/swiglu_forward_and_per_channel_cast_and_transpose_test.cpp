// swiglu_forward_and_per_channel_cast_and_transpose_test.cpp - its case
// table: TileKernels' grid (seven hidden sizes, bm 32 and 128, transposed
// or not, the three clamps; both roundings in turn; its M of 4096 and 8064
// on every twelfth case, else 384), one tile, no rows, the benchmark
// shapes, and mistakes. out and
// out_sf are compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

namespace {

/// --shape M x 2H.
Case forward(int64_t m, int64_t h, int64_t bm, bool round, bool straight,
             const char *clamp, int kind = Case::gpu) {
  return {.label = "",
          .shape = {m, 2 * h},
          .set = {{"num_per_tokens", std::to_string(bm)},
                  {"round_sf", round ? "true" : "false"},
                  {"without_transpose", straight ? "true" : "false"},
                  {"swiglu_clamp_value", clamp}},
          .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(swiglu_forward_and_per_channel_cast_and_transpose) {
  OpTest t{.op = "swiglu_forward_and_per_channel_cast_and_transpose",
           .fills = {{"x", normal(0, 2)}},
           .poison_outputs = true};
  const int64_t hs[] = {576, 2048, 2560, 3072, 4096, 6144, 7168};
  int i = 0;
  for (int64_t h : hs)
    for (int64_t bm : {32, 128})
      for (bool straight : {false, true})
        for (const char *clamp : {"0", "10", "0.5"}) {
          // TileKernels' M (4096, 8064) every twelfth case, else 384.
          ++i;
          const int64_t m = i % 12 ? 384 : i % 24 ? 4096 : 8064;
          t.cases.push_back(forward(m, h, bm, i % 4 < 2, straight, clamp));
        }
  t.cases.push_back(forward(128, 64, 32, false, false, "0"));
  t.cases.push_back(forward(0, 2048, 128, true, false, "0"));
  // TileKernels' benchmark: 8064 tokens, H = 2048, bm 128, rounded,
  // transposed, without and with the clamp 0.5.
  for (const char *clamp : {"0", "0.5"}) {
    Case c = forward(8064, 2048, 128, true, false, clamp, Case::bench);
    c.peer_us = clamp[1] ? 0 : 32.54; // measured: no clamp
    t.cases.push_back(c);
  }

  const auto x = fake(DType::bf16, {128, 256});
  const auto out = fake(DType::e4m3, {128, 128}, {}, 0x20000);
  const auto sf = fake(DType::f32, {1, 128}, {}, 0x30000);
  t.errors = {
      {"64 rows a scale",
       {x, out, fake(DType::f32, {2, 128}, {}, 0x30000)},
       {{"num_per_tokens", int64_t{64}}},
       "swiglu_forward_and_per_channel_cast_and_transpose: argument "
       "'num_per_tokens' is 64; requires 32 or 128"},
      {"an f32 x",
       {fake(DType::f32, {128, 256}), out, sf},
       {},
       "swiglu_forward_and_per_channel_cast_and_transpose: argument 'x' has "
       "dtype f32; requires bf16"},
  };
  return t;
}

} // namespace tilejit::harness
