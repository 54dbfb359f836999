// per_block_cast_test.cpp - The case tables of per_block_cast (e4m3 and
// e2m1, the four block sizes, the three scale layouts, tails of rows and of
// the last block, size 0, TileKernels' test grid, its benchmark shapes, and
// mistakes), per_block_cast_with_sf_only and
// per_block_cast_with_precomputed_sf. Data and scales are compared bytewise.
#include "op_test.h"
#include "quant/packed_scales_compare.h"

namespace tilejit::harness {

namespace {

using Set = std::map<std::string, std::string>;

/// The flag sets the original tests use, and the unrounded row-major one.
const Set kFlags[] = {
    {{"round_sf", "true"}},
    {{"use_tma_aligned_col_major_sf", "true"},
     {"round_sf", "true"},
     {"use_packed_ue8m0", "true"}},
    {},
};

Set with(Set set, const char *fmt, int64_t bm, int64_t bk) {
  set["fmt"] = fmt;
  set["bm"] = std::to_string(bm);
  set["bk"] = std::to_string(bk);
  return set;
}

/// Packed scales compared with the bytes past a row's last scale wiped.
Compare scales() {
  return packed_scales([](const ops::HostCall &c) {
    const int64_t bk = c.integer("bk");
    return (c.tensor("x").size(1) + bk - 1) / bk;
  });
}

/// Small cases over every block size and format, with `flags`.
void add_small_cases(OpTest &t, const std::vector<Set> &flags) {
  for (DType dtype : {DType::bf16, DType::f32})
    for (const char *fmt : {"e4m3", "e2m1"})
      for (auto [bm, bk] : {std::pair<int64_t, int64_t>{128, 128},
                            {32, 32},
                            {128, 32},
                            {32, 128}})
        for (const Set &f : flags)
          for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 64},
                              {33, 576},
                              {130, 512},
                              {0, 256}})
            t.cases.push_back({.shape = {m, k},
                               .set = with(f, fmt, bm, bk),
                               .dtypes = {{"", dtype}}});
}

} // namespace

TILEJIT_OP_TEST(per_block_cast) {
  OpTest t{.op = "per_block_cast", .compare = {{"out_sf", scales()}}};
  add_small_cases(t, {std::begin(kFlags), std::end(kFlags)});
  // TileKernels' test grid.
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
      for (DType dtype : {DType::bf16, DType::f32})
        for (const char *fmt : {"e4m3", "e2m1"})
          for (int f : {0, 1})
            for (int64_t b : {128, 32})
              t.cases.push_back({.shape = {m, k},
                                 .set = with(kFlags[f], fmt, b, b),
                                 .dtypes = {{"", dtype}},
                                 .kind = Case::big});
  // The benchmarks of shared/perf/tilekernels_h200.md.
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with(kFlags[0], "e4m3", 128, 128),
                     .kind = Case::bench,
                     .peer_us = 45.49});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with(kFlags[1], "e2m1", 32, 32),
                     .kind = Case::bench,
                     .peer_us = 160.11});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with(kFlags[1], "e4m3", 128, 128),
                     .kind = Case::bench});

  const auto x = fake(DType::bf16, {100, 512});
  const auto out = fake(DType::e4m3, {100, 512}, {}, 0x100000);
  const auto sf = fake(DType::f32, {1, 4}, {}, 0x200000);
  t.errors = {
      {"a block of 64 rows",
       {x, out, sf},
       {{"bm", int64_t{64}}},
       "per_block_cast: argument 'bm' is 64; requires 32 or 128"},
      {"packed scales without column-major ones",
       {x, out, sf},
       {{"round_sf", true}, {"use_packed_ue8m0", true}},
       "per_block_cast: argument 'use_packed_ue8m0' is true; requires "
       "use_tma_aligned_col_major_sf and round_sf"},
      {"K not a multiple of 64",
       {fake(DType::bf16, {100, 96}), fake(DType::e4m3, {100, 96}), sf},
       {},
       "per_block_cast: argument 'x' has shape [100, 96] (K = 96); requires K "
       "a multiple of 64"},
      {"an e4m3 out for e2m1",
       {x, out, sf},
       {{"fmt", std::string("e2m1")}},
       "per_block_cast: argument 'out' is e4m3[100, 512] strides [512, 1]; "
       "requires i8[100, 256]"},
      {"scales of 32-row blocks for 128-row ones",
       {x, out, fake(DType::f32, {4, 4})},
       {},
       "per_block_cast: argument 'out_sf' is f32[4, 4] strides [4, 1]; "
       "requires f32[1, 4] strides [>= 4, 1]"},
      {"a strided x",
       {fake(DType::bf16, {100, 512}, {1024, 1}), out, sf},
       {},
       "per_block_cast: argument 'x' is bf16[100, 512] strides [1024, 1]; "
       "requires a contiguous tensor"},
  };
  return t;
}

TILEJIT_OP_TEST(per_block_cast_with_sf_only) {
  OpTest t{.op = "per_block_cast_with_sf_only",
           .compare = {{"out_sf", scales()}}};
  add_small_cases(t, {std::begin(kFlags), std::end(kFlags)});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with(kFlags[1], "e4m3", 128, 128),
                     .kind = Case::bench,
                     .peer_us = 27.26});
  t.errors = {
      {"row-major scales where packed ones are asked for",
       {fake(DType::bf16, {100, 512}), fake(DType::f32, {1, 4}, {}, 0x100000)},
       {{"use_tma_aligned_col_major_sf", true},
        {"round_sf", true},
        {"use_packed_ue8m0", true}},
       "per_block_cast_with_sf_only: argument 'out_sf' is f32[1, 4] strides "
       "[4, 1]; requires i32[1, 1] strides [1, >= 4]"},
  };
  return t;
}

TILEJIT_OP_TEST(per_block_cast_with_precomputed_sf) {
  // Scales as a cast would give them: positive.
  OpTest t{.op = "per_block_cast_with_precomputed_sf",
           .fills = {{"sf", uniform(1e-3, 1.0)}}};
  add_small_cases(t, {kFlags[0], kFlags[2]});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with(kFlags[0], "e4m3", 128, 128),
                     .kind = Case::bench,
                     .peer_us = 44.11});
  const auto x = fake(DType::bf16, {100, 512});
  const auto sf = fake(DType::f32, {1, 4}, {}, 0x100000);
  const auto out = fake(DType::e4m3, {100, 512}, {}, 0x200000);
  t.errors = {
      {"column-major scales",
       {x, sf, out},
       {{"use_tma_aligned_col_major_sf", true}},
       "per_block_cast_with_precomputed_sf: argument "
       "'use_tma_aligned_col_major_sf' is true; requires false (a "
       "precomputed sf is a row-major f32)"},
      {"column-major strides",
       {x, fake(DType::f32, {1, 4}, {1, 4}, 0x100000), out},
       {},
       "per_block_cast_with_precomputed_sf: argument 'sf' is f32[1, 4] "
       "strides [1, 4]; requires a contiguous tensor"},
  };
  return t;
}

} // namespace tilejit::harness
