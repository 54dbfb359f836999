// per_token_cast_and_cast_back_test.cpp - fake quantization's case table:
// TileKernels' hidden sizes (576 included: a block of 64 columns) with
// every group size, both formats and the three kinds of scales, rows in
// tails, padded rows, no rows, f32, benchmark shapes, and mistakes. The
// output is compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

namespace {

Case round_trip(int64_t m, int64_t k, int64_t group, const char *fmt,
                const char *scales, DType dtype = DType::bf16,
                int kind = Case::gpu) {
  return {
      .label = scales,
      .shape = {m, k},
      .set = {{"fmt", fmt},
              {"num_per_channels", std::to_string(group)},
              {"round_sf", std::string(scales) == "round" ? "true" : "false"},
              {"use_e4m3_sf",
               std::string(scales) == "e4m3" ? "true" : "false"}},
      .dtypes = {{"x", dtype}},
      .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(per_token_cast_and_cast_back) {
  // bf16 x around 64 reaches the top of e4m3 and past e2m1's; f32 x of
  // 1e-5 takes the absmax clamps (1e-4, and max / 2^9 for e4m3 scales).
  OpTest t{.op = "per_token_cast_and_cast_back",
           .fills = {{"x:bf16", normal(0, 64)}, {"x:f32", normal(0, 1e-5)}}};
  for (int64_t k : {576, 2048, 2560, 7168})
    for (int64_t group : {16, 32, 64, 128}) {
      if (k % group != 0)
        continue;
      for (const char *fmt : {"e4m3", "e2m1"})
        for (const char *scales : {"plain", "round", "e4m3"})
          t.cases.push_back(round_trip(37, k, group, fmt, scales));
    }
  // f32; rows padded to 4096 (TileKernels' strided rows); one row; none;
  // many rows.
  t.cases.push_back(round_trip(29, 3072, 128, "e4m3", "plain", DType::f32));
  t.cases.push_back(round_trip(17, 4096, 32, "e2m1", "e4m3", DType::f32));
  Case padded = round_trip(33, 2048, 128, "e4m3", "round");
  padded.row_stride = {{"x", 4096}};
  t.cases.push_back(padded);
  t.cases.push_back(round_trip(1, 64, 16, "e2m1", "plain"));
  t.cases.push_back(round_trip(0, 2048, 128, "e4m3", "plain"));
  t.cases.push_back(round_trip(4001, 7168, 128, "e4m3", "e4m3"));
  for (const char *fmt : {"e4m3", "e2m1"})
    t.cases.push_back(
        round_trip(8192, 7168, 128, fmt, "plain", DType::bf16, Case::bench));

  const auto x = fake(DType::bf16, {8, 256});
  const auto out = fake(DType::bf16, {8, 256}, {}, 0x20000);
  t.errors = {
      {"a group of 256",
       {x, out},
       {{"num_per_channels", int64_t{256}}},
       "per_token_cast_and_cast_back: argument 'num_per_channels' is 256; "
       "requires 16, 32, 64 or 128"},
      {"a group that does not divide K",
       {fake(DType::bf16, {8, 576}), fake(DType::bf16, {8, 576}, {}, 0x20000)},
       {{"num_per_channels", int64_t{128}}},
       "per_token_cast_and_cast_back: argument 'x' has K = 576; requires K % "
       "num_per_channels == 0 (num_per_channels = 128)"},
      {"both roundings",
       {x, out},
       {{"round_sf", true}, {"use_e4m3_sf", true}},
       "per_token_cast_and_cast_back: arguments 'round_sf' and 'use_e4m3_sf' "
       "are both true; requires at most one"},
      {"K not a multiple of 64",
       {fake(DType::bf16, {8, 96}), fake(DType::bf16, {8, 96}, {}, 0x20000)},
       {},
       "per_token_cast_and_cast_back: argument 'x' has shape [8, 96] (K = "
       "96); requires K >= 64 and K a multiple of 64"},
      {"out of another dtype",
       {x, fake(DType::f32, {8, 256}, {}, 0x20000)},
       {},
       "per_token_cast_and_cast_back: argument 'out' is f32[8, 256] strides "
       "[256, 1]; requires bf16[8, 256] strides [>= 256, 1]"},
  };
  return t;
}

} // namespace tilejit::harness
