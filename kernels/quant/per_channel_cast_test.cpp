// per_channel_cast_test.cpp - The case tables of per_channel_cast and
// per_channel_cast_and_transpose: bf16 and f32, rounded and not, 32- and
// 128-row scales, tails of columns, size 0, TileKernels' test grids, their
// benchmark shapes, and mistakes. Data and scales are compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

namespace {

using Set = std::map<std::string, std::string>;

Set with(int64_t num_per_tokens, bool round_sf) {
  return {{"num_per_tokens", std::to_string(num_per_tokens)},
          {"round_sf", round_sf ? "true" : "false"}};
}

/// Small cases and TileKernels' grid (M 4096 and 8064, its seven K).
void add_cases(OpTest &t, std::vector<DType> dtypes,
               std::vector<int64_t> num_per_tokens) {
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
  t.cases.push_back(
      {.shape = {8064, 7168}, .set = with(128, true), .kind = Case::bench});
}

} // namespace

TILEJIT_OP_TEST(per_channel_cast) {
  OpTest t{.op = "per_channel_cast"};
  add_cases(t, {DType::bf16, DType::f32}, {128});
  const auto x = fake(DType::bf16, {256, 512});
  const auto out = fake(DType::e4m3, {256, 512}, {}, 0x100000);
  const auto sf = fake(DType::f32, {2, 512}, {}, 0x200000);
  t.errors = {
      {"32 rows a scale",
       {x, out, fake(DType::f32, {8, 512}, {}, 0x200000)},
       {{"num_per_tokens", int64_t{32}}},
       "per_channel_cast: argument 'num_per_tokens' is 32; requires 128"},
      {"M not a multiple of 128",
       {fake(DType::bf16, {200, 512}), fake(DType::e4m3, {200, 512}), sf},
       {},
       "per_channel_cast: argument 'x' has shape [200, 512] (M = 200); "
       "requires M a multiple of 128"},
      {"scales of another shape",
       {x, out, fake(DType::f32, {1, 512}, {}, 0x200000)},
       {},
       "per_channel_cast: argument 'out_sf' is f32[1, 512] strides [512, 1]; "
       "requires f32[2, 512]"},
  };
  return t;
}

TILEJIT_OP_TEST(per_channel_cast_and_transpose) {
  OpTest t{.op = "per_channel_cast_and_transpose"};
  add_cases(t, {DType::bf16}, {32, 128});
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
