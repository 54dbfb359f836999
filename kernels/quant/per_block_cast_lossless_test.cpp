// per_block_cast_lossless_test.cpp - per_block_cast_lossless's case table:
// the three output blocks TileKernels tests ((1, 128), (32, 32), (128,
// 128)) and others, f32 (row- and column-major) and packed input scales,
// the output scale layouts, tails of rows and columns, size 0, its grid,
// the benchmark, and mistakes. Data and scales are compared bytewise.
#include "op_test.h"
#include "quant/packed_scales_compare.h"

namespace tilejit::harness {

namespace {

using Set = std::map<std::string, std::string>;

/// Output scale flags: row-major f32, column-major f32, packed.
const Set kOutFlags[] = {
    {},
    {{"use_tma_aligned_col_major_sf", "true"}},
    {{"use_tma_aligned_col_major_sf", "true"}, {"use_packed_ue8m0", "true"}},
};

Set with(Set set, int64_t x_bk, int64_t out_bm, int64_t out_bk) {
  set["x_bk"] = std::to_string(x_bk);
  set["out_bm"] = std::to_string(out_bm);
  set["out_bk"] = std::to_string(out_bk);
  return set;
}

} // namespace

TILEJIT_OP_TEST(per_block_cast_lossless) {
  // Every fp4 code; input scales 2^-8 .. 2^2 (within 2^11 of each other).
  OpTest t{.op = "per_block_cast_lossless",
           .fills = {{"x_data", random_bytes()}, {"x_sf", exponents(-8, 2)}},
           .compare = {{"out_sf", packed_scales([](const ops::HostCall &c) {
                          const int64_t bk = c.integer("out_bk");
                          return (2 * c.tensor("x_data").size(1) + bk - 1) / bk;
                        })}}};
  for (const Set &flags : kOutFlags)
    for (DType sf : {DType::f32, DType::i32})
      for (auto [x_bk, out_bm, out_bk] :
           {std::tuple<int64_t, int64_t, int64_t>{32, 1, 128},
            {32, 32, 32},
            {32, 128, 128},
            {16, 32, 64},
            {64, 1, 64}})
        for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 32},
                            {33, 576},
                            {130, 512},
                            {257, 7168},
                            {0, 256}})
          t.cases.push_back({.shape = {m, k},
                             .set = with(flags, x_bk, out_bm, out_bk),
                             .dtypes = {{"x_sf", sf}}});
  // Column-major f32 input scales.
  t.cases.push_back({.shape = {130, 512},
                     .set = with({}, 32, 32, 32),
                     .strides = {{"x_sf", {1, 132}}}});
  // TileKernels' grid: input (1, 32) scales both ways, its three output
  // blocks, output scales row-major or packed.
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 7168})
      for (auto [out_bm, out_bk] :
           {std::pair<int64_t, int64_t>{1, 128}, {32, 32}, {128, 128}})
        for (int f : {0, 2})
          for (DType sf : {DType::f32, DType::i32})
            t.cases.push_back({.shape = {m, k},
                               .set = with(kOutFlags[f], 32, out_bm, out_bk),
                               .dtypes = {{"x_sf", sf}},
                               .kind = Case::big});
  // The benchmarks: packed (1, 32) in, (1, 128) packed or (128, 128)
  // row-major out.
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with(kOutFlags[2], 32, 1, 128),
                     .dtypes = {{"x_sf", DType::i32}},
                     .kind = Case::bench,
                     .peer_us = 90.13});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with({}, 32, 128, 128),
                     .dtypes = {{"x_sf", DType::i32}},
                     .kind = Case::bench,
                     .peer_us = 92.34});

  const auto x = fake(DType::i8, {100, 256});
  const auto x_sf = fake(DType::f32, {100, 16}, {}, 0x100000);
  const auto out = fake(DType::e4m3, {100, 512}, {}, 0x200000);
  const auto out_sf = fake(DType::f32, {1, 4}, {}, 0x300000);
  t.errors = {
      {"input blocks of several rows",
       {x, x_sf, out, out_sf},
       {{"x_bm", int64_t{32}}},
       "per_block_cast_lossless: argument 'x_bm' is 32; requires 1 (input "
       "scales of (1, x_bk))"},
      {"input scales of 256 channels",
       {x, fake(DType::f32, {100, 2}, {}, 0x100000), out, out_sf},
       {{"x_bk", int64_t{256}}},
       "per_block_cast_lossless: argument 'x_bk' is 256; requires a power of "
       "two from 8 to 128"},
      {"an output block narrower than the input's",
       {x, fake(DType::f32, {100, 4}, {}, 0x100000), out, out_sf},
       {{"x_bk", int64_t{128}}, {"out_bk", int64_t{64}}},
       "per_block_cast_lossless: argument 'out_bk' is 64; requires a power of "
       "two from x_bk = 128 to 128"},
      {"an output block of 64 rows",
       {x, x_sf, out, fake(DType::f32, {2, 4}, {}, 0x300000)},
       {{"out_bm", int64_t{64}}},
       "per_block_cast_lossless: argument 'out_bm' is 64; requires 1, 32 or "
       "128"},
      {"packed scales without the column-major layout",
       {x, x_sf, out, fake(DType::i32, {1, 1}, {1, 4}, 0x300000)},
       {{"use_packed_ue8m0", true}},
       "per_block_cast_lossless: argument 'use_packed_ue8m0' is true; requires "
       "use_tma_aligned_col_major_sf"},
      {"x_data of the wrong width",
       {fake(DType::i8, {100, 512}), x_sf, out, out_sf},
       {},
       "per_block_cast_lossless: argument 'x_data' is i8[100, 512] strides "
       "[512, 1]; requires i8[100, 256]"},
  };
  return t;
}

} // namespace tilejit::harness
