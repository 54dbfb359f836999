// per_token_cast_test.cpp - per_token_cast's case table: small shapes with
// every tiling (tails, parts, a last short group, one row a block), 2.1's
// E4M3 scales and stochastic_cast, a quantized x, the original's row stride
// of 2K, TileKernels' test grid, the benchmark shapes, and mistakes. Data
// and scales are compared bytewise.
#include "op_test.h"
#include "quant/packed_scales_compare.h"

#include <fmt/format.h>

namespace tilejit::harness {

namespace {

/// The flag sets the original tests use, and the unrounded row-major one.
const std::map<std::string, std::string> kFlags[] = {
    {{"round_sf", "true"}},
    {{"use_tma_aligned_col_major_sf", "true"},
     {"round_sf", "true"},
     {"use_packed_ue8m0", "true"}},
    {},
};

/// TileKernels 2.1's E4M3 scales, row- and column-major.
const std::map<std::string, std::string> kE4m3Sf[] = {
    {{"use_e4m3_sf", "true"}},
    {{"use_e4m3_sf", "true"}, {"use_tma_aligned_col_major_sf", "true"}},
};

std::map<std::string, std::string>
with_group(std::map<std::string, std::string> set, int64_t group) {
  set["num_per_channels"] = std::to_string(group);
  return set;
}

} // namespace

TILEJIT_OP_TEST(per_token_cast) {
  // A quantized x: e4m3 of normal values, every byte of packed e2m1, f32
  // scales of 2^-10 .. 1, packed ones UE8M0 codes of 2^-27 .. 2^27.
  OpTest t{.op = "per_token_cast",
           .fills = {{"x:i8", random_bytes()},
                     {"x_sf:f32", uniform(1e-3, 1.0)},
                     {"x_sf:i32", bytes_in(100, 154)}},
           .compare = {{"out_sf", packed_scales([](const ops::HostCall &c) {
                          const int64_t g = c.integer("num_per_channels");
                          const auto &x = c.tensor("x");
                          const int64_t k =
                              x.size(1) * (x.dtype() == DType::i8 ? 2 : 1);
                          return (k + g - 1) / g;
                        })}}};
  for (DType dtype : {DType::bf16, DType::f32})
    for (const auto &flags : kFlags)
      for (auto [m, k, group] :
           {std::tuple<int64_t, int64_t, int64_t>{64, 512, 128},
            {1, 128, 128},
            {17, 576, 128},
            {33, 576, 32},
            {5, 640, 64},
            {3, 192, 16},
            {7, 576, 576},   // 9 parts of 64
            {40, 384, 384},  // 3 parts of 128
            {17, 320, 128},  // a last group of 64
            {33, 704, 128},  // the same, 5 whole
            {9, 1056, 64},   // 16 whole, a last of 32
            {5, 200, 64},    // a last group of 8
            {48, 192, 192},  // 3 parts of 64
            {9, 2560, 2560}, // group 5 x 512
            {2, 1280, 1280}, // group 5 x 256
            {3, 3072, 3072}, // group 3 x 1024
            {1, 64, 64},
            {0, 512, 128},
            {130, 4096, 128},
            // Enough rows for the full tiles (fewer
            // rows take smaller ones), with tails.
            {6600, 576, 128},
            {8001, 576, 64},
            {2100, 2048, 128}})
        t.cases.push_back({.shape = {m, k},
                           .set = with_group(flags, group),
                           .dtypes = {{"", dtype}}});
  // e2m1 (two codes a byte) over the tilings: boxes, tails, parts, a row a
  // block.
  for (DType dtype : {DType::bf16, DType::f32})
    for (const auto &flags : kFlags)
      for (auto [m, k, group] :
           {std::tuple<int64_t, int64_t, int64_t>{64, 512, 32},
            {17, 576, 128},
            {33, 576, 16},
            {7, 576, 576},
            {17, 320, 128},
            {5, 200, 64},
            {9, 2560, 2560},
            {0, 512, 32},
            {6600, 576, 32}}) {
        auto set = with_group(flags, group);
        set["fmt"] = "e2m1";
        t.cases.push_back(
            {.shape = {m, k}, .set = set, .dtypes = {{"", dtype}}});
      }
  // E4M3 scales (2.1) for both formats over the tilings (the e4m3 clamp,
  // an amax of 0.875, bites on many groups of 16 normal values).
  for (DType dtype : {DType::bf16, DType::f32})
    for (const auto &flags : kE4m3Sf)
      for (const char *fmt : {"e4m3", "e2m1"})
        for (auto [m, k, group] :
             {std::tuple<int64_t, int64_t, int64_t>{64, 512, 128},
              {17, 576, 128},
              {33, 576, 16},
              {5, 640, 64},
              {7, 576, 576},
              {17, 320, 128},
              {9, 2560, 2560},
              {0, 512, 32},
              {6600, 576, 32}}) {
          auto set = with_group(flags, group);
          set["fmt"] = fmt;
          t.cases.push_back(
              {.shape = {m, k}, .set = set, .dtypes = {{"", dtype}}});
        }
  // A quantized x re-quantized (§4.3): e4m3 and packed e2m1 data (its
  // shape's K is bytes, half the values), scales of 128 x 128, 32 x 32,
  // 1 x 128 and 32 x 16 blocks, f32 row- or column-major or packed, both
  // output formats, groups of 32 and 128, the flag sets; tails, size 0.
  for (DType in : {DType::e4m3, DType::i8})
    for (auto [bm, bk] :
         {std::pair<int64_t, int64_t>{128, 128}, {32, 32}, {1, 128}, {32, 16}})
      for (int layout = 0; layout < 3; ++layout)
        for (auto [m, k, group, fmt, f] :
             {std::tuple<int64_t, int64_t, int64_t, const char *, int>{
                  64, 512, 128, "e4m3", 0},
              {130, 2048, 32, "e2m1", 1},
              {17, 576, 32, "e4m3", 2},
              {300, 1024, 128, "e2m1", 0},
              {0, 512, 128, "e4m3", 1}}) {
          auto set = with_group(kFlags[f], group);
          set["fmt"] = fmt;
          set["x_sf"] = "passed";
          set["x_block_m"] = std::to_string(bm);
          set["x_block_k"] = std::to_string(bk);
          std::map<std::string, DType> dtypes = {{"x", in}};
          Case c{.shape = {m, in == DType::i8 ? k / 2 : k}, .set = set};
          const int64_t rows = (m + bm - 1) / bm;
          if (layout == 1) // column-major f32, M' padded to 4
            c.strides = {{"x_sf", {1, (rows + 3) / 4 * 4}}};
          if (layout == 2)
            dtypes["x_sf"] = DType::i32;
          c.dtypes = dtypes;
          t.cases.push_back(c);
        }
  // stochastic_cast (2.1, in software): both formats over the box tilings
  // (tails of rows and of the last column block), the flag sets, E4M3
  // scales, a quantized x.
  for (DType dtype : {DType::bf16, DType::f32})
    for (const char *fmt : {"e4m3", "e2m1"})
      for (auto [m, k, group, f] :
           {std::tuple<int64_t, int64_t, int64_t, int>{64, 512, 128, 0},
            {17, 576, 32, 1},
            {33, 576, 16, 2},
            {17, 320, 128, 0},
            {0, 512, 32, 1},
            {2100, 2048, 128, 1}}) {
        auto set = with_group(kFlags[f], group);
        set["fmt"] = fmt;
        set["stochastic_cast"] = "true";
        t.cases.push_back(
            {.shape = {m, k}, .set = set, .dtypes = {{"", dtype}}});
      }
  for (const char *fmt : {"e4m3", "e2m1"}) {
    auto set = with_group(kE4m3Sf[1], 16);
    set["fmt"] = fmt;
    set["stochastic_cast"] = "true";
    t.cases.push_back({.shape = {130, 2048}, .set = set});
    auto q = with_group(kFlags[1], 32);
    q["fmt"] = fmt;
    q["stochastic_cast"] = "true";
    q["x_sf"] = "passed";
    q["x_block_m"] = q["x_block_k"] = "128";
    t.cases.push_back({.shape = {130, 2048},
                       .set = q,
                       .dtypes = {{"x", DType::e4m3}, {"x_sf", DType::i32}}});
  }
  // e5m6 (one scale a row, 8 codes to 3 words): tails of the 1024-column
  // tile, several rows a tile, the special values (3 inputs of constants
  // with a last column of 65024, as TileKernels' tests), size 0.
  for (DType dtype : {DType::bf16, DType::f32})
    for (const auto &flags : kFlags)
      for (auto [m, k] : {std::pair<int64_t, int64_t>{5, 64},
                          {33, 576},
                          {17, 1024},
                          {9, 2560},
                          {3, 7168},
                          {0, 512},
                          {300, 2048}}) {
        auto set = with_group(flags, k);
        set["fmt"] = "e5m6";
        t.cases.push_back(
            {.shape = {m, k}, .set = set, .dtypes = {{"", dtype}}});
      }
  // The original's row stride of 2K; rows 8-byte aligned (no 16-byte
  // vectors) and 4-byte aligned (no 8-byte ones either).
  for (DType dtype : {DType::bf16, DType::f32}) {
    t.cases.push_back({.shape = {301, 2048},
                       .set = with_group(kFlags[0], 128),
                       .dtypes = {{"", dtype}},
                       .row_stride = {{"x", 4096}}});
    for (int64_t group : {32, 128, 576})
      t.cases.push_back({.shape = {301, 576},
                         .set = with_group(kFlags[0], group),
                         .dtypes = {{"", dtype}},
                         .row_stride = {{"x", 1152}}});
    for (int64_t stride : {580, 578})
      t.cases.push_back({.shape = {301, 576},
                         .set = with_group(kFlags[0], 576),
                         .dtypes = {{"", dtype}},
                         .row_stride = {{"x", stride}}});
  }
  // TileKernels' test grid.
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
      for (int64_t group : {int64_t{32}, int64_t{64}, int64_t{128}, k})
        for (DType dtype : {DType::bf16, DType::f32})
          for (int f : {0, 1})
            t.cases.push_back({.shape = {m, k},
                               .set = with_group(kFlags[f], group),
                               .dtypes = {{"", dtype}},
                               .kind = Case::big});
  // TileKernels' grid for e2m1 (its groups of 32 and 128).
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
      for (int64_t group : {int64_t{32}, int64_t{128}})
        for (int f : {0, 1}) {
          auto set = with_group(kFlags[f], group);
          set["fmt"] = "e2m1";
          t.cases.push_back({.shape = {m, k}, .set = set, .kind = Case::big});
        }
  {
    auto set = with_group(kFlags[1], 32);
    set["fmt"] = "e2m1";
    t.cases.push_back({.shape = {8001, 7168},
                       .set = set,
                       .kind = Case::bench,
                       .peer_us = 166.77});
  }
  // 2.1's grid with E4M3 scales: NVFP4's groups of 16 and e4m3's of 128.
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 7168})
      for (const auto &flags : kE4m3Sf)
        for (const char *fmt : {"e4m3", "e2m1"}) {
          auto set = with_group(flags, fmt[1] == '2' ? 16 : 128);
          set["fmt"] = fmt;
          t.cases.push_back({.shape = {m, k}, .set = set, .kind = Case::big});
        }
  {
    auto set = with_group(kE4m3Sf[0], 16);
    set["fmt"] = "e2m1";
    t.cases.push_back({.shape = {8001, 7168}, .set = set, .kind = Case::bench});
    auto stochastic = with_group(kFlags[1], 128);
    stochastic["stochastic_cast"] = "true";
    t.cases.push_back(
        {.shape = {8001, 7168}, .set = stochastic, .kind = Case::bench});
  }
  // TileKernels' grid of quantized inputs (its x_block_size (128, 128) and
  // (32, 32), groups of 32 and 128, both flag sets): e4m3 to e4m3 and
  // packed e2m1 to e2m1, some hidden sizes.
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 7168})
      for (int64_t block : {128, 32})
        for (int64_t group : {32, 128})
          for (DType in : {DType::e4m3, DType::i8}) {
            auto set = with_group(kFlags[group == 128 ? 1 : 0], group);
            set["fmt"] = in == DType::i8 ? "e2m1" : "e4m3";
            set["x_sf"] = "passed";
            set["x_block_m"] = set["x_block_k"] = std::to_string(block);
            t.cases.push_back(
                {.shape = {m, in == DType::i8 ? k / 2 : k},
                 .set = set,
                 .dtypes = {{"x", in},
                            {"x_sf", group == 128 ? DType::i32 : DType::f32}},
                 .kind = Case::big});
          }
  {
    auto set = with_group(kFlags[1], 128);
    set["x_sf"] = "passed";
    set["x_block_m"] = set["x_block_k"] = "128";
    t.cases.push_back({.shape = {8001, 7168},
                       .set = set,
                       .dtypes = {{"x", DType::e4m3}, {"x_sf", DType::i32}},
                       .kind = Case::bench});
  }
  // TileKernels' e5m6 grid, and its benchmark (row-major rounded scales).
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
      for (DType dtype : {DType::bf16, DType::f32})
        for (int f : {0, 1}) {
          auto set = with_group(kFlags[f], k);
          set["fmt"] = "e5m6";
          t.cases.push_back({.shape = {m, k},
                             .set = set,
                             .dtypes = {{"", dtype}},
                             .kind = Case::big});
        }
  {
    auto set = with_group(kFlags[0], 7168);
    set["fmt"] = "e5m6";
    t.cases.push_back({.shape = {8001, 7168},
                       .set = set,
                       .kind = Case::bench,
                       .peer_us = 52.55});
  }
  // The benchmarks (the original benchmarks packed UE8M0), with
  // TileKernels' time where measured.
  for (auto [m, k, group, dtype, peer] :
       {std::tuple<int64_t, int64_t, int64_t, DType, double>{
            8001, 7168, 128, DType::bf16, 43.38},
        {8001, 2048, 128, DType::bf16, 0},
        {4001, 576, 128, DType::bf16, 0},
        {8001, 7168, 32, DType::bf16, 0},
        {8001, 7168, 7168, DType::bf16, 0},
        {8001, 7168, 128, DType::f32, 0}})
    t.cases.push_back({.shape = {m, k},
                       .set = with_group(kFlags[1], group),
                       .dtypes = {{"", dtype}},
                       .kind = Case::bench,
                       .peer_us = peer});

  const auto x = fake(DType::bf16, {100, 512});
  const auto out = fake(DType::e4m3, {100, 512}, {}, 0x100000);
  const auto sf = fake(DType::f32, {100, 4}, {}, 0x200000);
  const auto none = ops::absent();
  auto params = [](std::map<std::string, ops::ParamValue> p) {
    p.emplace("num_per_channels", int64_t{128});
    return p;
  };
  t.errors = {
      {"an unsupported format",
       {x, none, out, sf},
       params({{"fmt", std::string("e5m2")}}),
       "per_token_cast: argument 'fmt' is 'e5m2'; requires e4m3, e2m1, or "
       "e5m6"},
      {"e5m6 with groups",
       {x, none, fake(DType::u8, {100, 768}, {}, 0x100000), sf},
       params({{"fmt", std::string("e5m6")}}),
       "per_token_cast: argument 'num_per_channels' is 128; fmt e5m6 "
       "requires K = 512 (one scale a row)"},
      {"e5m6 words off a 4-byte boundary",
       {x, none, fake(DType::u8, {100, 768}, {}, 0x100001),
        fake(DType::f32, {100, 1}, {}, 0x200000)},
       {{"fmt", std::string("e5m6")}, {"num_per_channels", int64_t{512}}},
       "per_token_cast: argument 'out' starts at 0x100001; fmt e5m6 requires "
       "a 4-byte aligned address (it is written as 32-bit words)"},
      {"an e4m3 out for e2m1",
       {x, none, out, sf},
       params({{"fmt", std::string("e2m1")}}),
       "per_token_cast: argument 'out' is e4m3[100, 512] strides [512, 1]; "
       "requires i8[100, 256]"},
      {"an odd K for e2m1",
       {fake(DType::bf16, {100, 511}), none,
        fake(DType::i8, {100, 255}, {}, 0x100000), sf},
       params(
           {{"fmt", std::string("e2m1")}, {"num_per_channels", int64_t{128}}}),
       "per_token_cast: argument 'x' has K = 511; fmt e2m1 requires K even "
       "(two codes a byte)"},
      {"an integer input",
       {fake(DType::i32, {100, 512}), none, out, sf},
       params({}),
       "per_token_cast: argument 'x' has dtype i32; requires bf16, f32, "
       "e4m3, or i8"},
      {"a group size the kernel does not have",
       {x, none, out, sf},
       {{"num_per_channels", int64_t{96}}},
       "per_token_cast: argument 'num_per_channels' is 96; requires 16, 32, "
       "64, 128, or K = 512 when K is a multiple of 64"},
      {"packed scales without the column-major layout",
       {x, none, out, sf},
       params({{"round_sf", true}, {"use_packed_ue8m0", true}}),
       "per_token_cast: argument 'use_packed_ue8m0' is true; requires "
       "use_tma_aligned_col_major_sf and round_sf"},
      {"out of the input's dtype",
       {x, none, fake(DType::bf16, {100, 512}), sf},
       params({}),
       "per_token_cast: argument 'out' has dtype bf16; requires e4m3, i8, or "
       "u8"},
      {"out of another shape",
       {x, none, fake(DType::e4m3, {100, 256}), sf},
       params({}),
       "per_token_cast: argument 'out' is e4m3[100, 256] strides [256, 1]; "
       "requires e4m3[100, 512]"},
      {"x with strided columns",
       {fake(DType::bf16, {100, 512}, {1024, 2}), none, out, sf},
       params({}),
       "per_token_cast: argument 'x' is bf16[100, 512] strides [1024, 2]; "
       "requires stride[1] = 1"},
      {"scales of the wrong shape",
       {x, none, out, sf},
       {{"num_per_channels", int64_t{64}}},
       "per_token_cast: argument 'out_sf' is f32[100, 4] strides [4, 1]; "
       "requires f32[100, 8] strides [>= 8, 1]"},
      {"row-major scales where column-major are asked for",
       {x, none, out, sf},
       params({{"use_tma_aligned_col_major_sf", true}}),
       "per_token_cast: argument 'out_sf' is f32[100, 4] strides [4, 1]; "
       "requires f32[100, 4] strides [1, >= 100]"},
      {"f32 scales where packed ones are asked for",
       {x, none, out, sf},
       params({{"use_tma_aligned_col_major_sf", true},
               {"round_sf", true},
               {"use_packed_ue8m0", true}}),
       "per_token_cast: argument 'out_sf' is f32[100, 4] strides [4, 1]; "
       "requires i32[100, 1] strides [1, >= 100]"},
      {"a quantized x without its scales",
       {fake(DType::e4m3, {100, 512}), none, out, sf},
       params({{"x_block_m", int64_t{128}}, {"x_block_k", int64_t{128}}}),
       "per_token_cast: argument 'x_sf' is None; requires it with a quantized "
       "x (x has dtype e4m3)"},
      {"scales with a bf16 x",
       {x, fake(DType::f32, {1, 4}, {}, 0x300000), out, sf},
       params({}),
       "per_token_cast: argument 'x_sf' is given; requires it None with a "
       "bf16 or f32 x (x has dtype bf16)"},
      {"a quantized x of 64 x 64 blocks",
       {fake(DType::e4m3, {100, 512}), fake(DType::f32, {2, 8}, {}, 0x300000),
        out, sf},
       params({{"x_block_m", int64_t{64}}, {"x_block_k", int64_t{64}}}),
       "per_token_cast: argument 'x_block_size' is (64, 64); requires "
       "x_block_m 1, 32 or 128 and x_block_k 16, 32, 64 or 128"},
      {"a quantized x in one group a row",
       {fake(DType::e4m3, {100, 128}), fake(DType::f32, {1, 1}, {}, 0x300000),
        fake(DType::e4m3, {100, 128}, {}, 0x100000),
        fake(DType::f32, {100, 1}, {}, 0x200000)},
       {{"num_per_channels", int64_t{128}},
        {"x_block_m", int64_t{128}},
        {"x_block_k", int64_t{128}}},
       "per_token_cast: argument 'x' is a quantized e4m3; requires fmt e4m3 "
       "or e2m1 in groups of 16 to 128, less than K = 128"},
      {"stochastic_cast in one group a row",
       {x, none, out, fake(DType::f32, {100, 1}, {}, 0x200000)},
       {{"num_per_channels", int64_t{512}}, {"stochastic_cast", true}},
       "per_token_cast: argument 'stochastic_cast' is true with fmt e4m3, "
       "num_per_channels = 512 and K = 512; requires fmt e4m3 or e2m1, groups "
       "of 16 to 128 less than K, and K % 4 == 0"},
      {"E4M3 scales rounded",
       {x, none, out, fake(DType::e4m3, {100, 4}, {}, 0x200000)},
       params({{"use_e4m3_sf", true}, {"round_sf", true}}),
       "per_token_cast: arguments 'use_e4m3_sf' and 'round_sf' are both "
       "true; requires at most one"},
      {"E4M3 scales with e5m6",
       {x, none, fake(DType::u8, {100, 768}, {}, 0x100000),
        fake(DType::e4m3, {100, 1}, {}, 0x200000)},
       {{"fmt", std::string("e5m6")},
        {"num_per_channels", int64_t{512}},
        {"use_e4m3_sf", true}},
       "per_token_cast: argument 'use_e4m3_sf' is true with fmt 'e5m6'; "
       "requires fmt e4m3 or e2m1"},
      {"f32 scales where E4M3 ones are asked for",
       {x, none, out, sf},
       params({{"use_e4m3_sf", true}}),
       "per_token_cast: argument 'out_sf' is f32[100, 4] strides [4, 1]; "
       "requires e4m3[100, 4] strides [>= 4, 1]"},
      {"E4M3 column-major scales of 4-byte columns",
       {x, none, out, fake(DType::e4m3, {100, 4}, {1, 100}, 0x200000)},
       params({{"use_e4m3_sf", true}, {"use_tma_aligned_col_major_sf", true}}),
       "per_token_cast: argument 'out_sf' is e4m3[100, 4] strides [1, 100]; "
       "requires e4m3[100, 4] strides [1, >= 112]"},
  };
  return t;
}

namespace {

/// Small cases of the two variants: e4m3 and e2m1, bf16 and f32, boxes,
/// tails, a last short group, size 0; `flags` the scale flag sets. (Groups
/// of a whole row are per_token_cast's only.)
void add_variant_cases(
    OpTest &t, const std::vector<std::map<std::string, std::string>> &flags) {
  for (DType dtype : {DType::bf16, DType::f32})
    for (const char *fmt : {"e4m3", "e2m1"})
      for (const auto &f : flags)
        for (auto [m, k, group] :
             {std::tuple<int64_t, int64_t, int64_t>{64, 512, 128},
              {1, 256, 128},
              {17, 576, 128},
              {33, 576, 32},
              {5, 640, 64},
              {3, 192, 16},
              {17, 320, 128},
              {5, 200, 64},
              {0, 512, 32},
              {6600, 576, 128},
              {2100, 2048, 32}}) {
          auto set = with_group(f, group);
          set["fmt"] = fmt;
          t.cases.push_back(
              {.shape = {m, k}, .set = set, .dtypes = {{"", dtype}}});
        }
}

} // namespace

TILEJIT_OP_TEST(per_token_cast_with_sf_only) {
  OpTest t{.op = "per_token_cast_with_sf_only",
           .compare = {{"out_sf", packed_scales([](const ops::HostCall &c) {
                          const int64_t g = c.integer("num_per_channels");
                          return (c.tensor("x").size(1) + g - 1) / g;
                        })}}};
  add_variant_cases(t,
                    {kFlags[0], kFlags[1], kFlags[2], kE4m3Sf[0], kE4m3Sf[1]});
  // TileKernels' grid (it checks sf_only where the group is not K).
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 7168})
      for (int64_t group : {32, 128})
        for (int f : {0, 1})
          t.cases.push_back({.shape = {m, k},
                             .set = with_group(kFlags[f], group),
                             .kind = Case::big});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with_group(kFlags[1], 128),
                     .kind = Case::bench,
                     .peer_us = 29.03});
  t.errors = {
      {"row-major scales where packed ones are asked for",
       {fake(DType::bf16, {100, 512}),
        fake(DType::f32, {100, 4}, {}, 0x100000)},
       {{"num_per_channels", int64_t{128}},
        {"use_tma_aligned_col_major_sf", true},
        {"round_sf", true},
        {"use_packed_ue8m0", true}},
       "per_token_cast_with_sf_only: argument 'out_sf' is f32[100, 4] strides "
       "[4, 1]; requires i32[100, 1] strides [1, >= 100]"},
      {"e5m6, per_token_cast's only",
       {fake(DType::bf16, {100, 512}),
        fake(DType::f32, {100, 4}, {}, 0x100000)},
       {{"num_per_channels", int64_t{128}}, {"fmt", std::string("e5m6")}},
       "per_token_cast_with_sf_only: argument 'fmt' is 'e5m6'; requires e4m3 "
       "or e2m1 (e5m6 only with per_token_cast)"},
      {"one group a row",
       {fake(DType::bf16, {100, 128}),
        fake(DType::f32, {100, 1}, {}, 0x100000)},
       {{"num_per_channels", int64_t{128}}},
       "per_token_cast_with_sf_only: argument 'num_per_channels' is 128; "
       "requires 16, 32, 64 or 128, less than K = 128"},
  };
  return t;
}

TILEJIT_OP_TEST(per_token_cast_with_precomputed_sf) {
  // Scales as a cast would give them: positive.
  // (E4M3 ones above e4m3's subnormals, which would round 1e-3 to 0.)
  OpTest t{
      .op = "per_token_cast_with_precomputed_sf",
      .fills = {{"sf", uniform(1e-3, 1.0)}, {"sf:e4m3", uniform(0.02, 1.0)}}};
  add_variant_cases(t, {kFlags[0], kFlags[2], kE4m3Sf[0]});
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 7168})
      for (int64_t group : {32, 128})
        t.cases.push_back({.shape = {m, k},
                           .set = with_group(kFlags[0], group),
                           .kind = Case::big});
  t.cases.push_back({.shape = {8001, 7168},
                     .set = with_group({}, 128),
                     .kind = Case::bench,
                     .peer_us = 48.51});
  const auto x = fake(DType::bf16, {100, 512});
  const auto sf = fake(DType::f32, {100, 4}, {}, 0x100000);
  const auto out = fake(DType::e4m3, {100, 512}, {}, 0x200000);
  t.errors = {
      {"one group a row",
       {x, fake(DType::f32, {100, 1}, {}, 0x100000), out},
       {{"num_per_channels", int64_t{512}}},
       "per_token_cast_with_precomputed_sf: argument 'num_per_channels' is "
       "512; requires 16, 32, 64 or 128, less than K = 512"},
      {"column-major scales",
       {x, sf, out},
       {{"num_per_channels", int64_t{128}},
        {"use_tma_aligned_col_major_sf", true}},
       "per_token_cast_with_precomputed_sf: argument "
       "'use_tma_aligned_col_major_sf' is true; requires false (a "
       "precomputed sf is a row-major f32)"},
      {"scales of another group size",
       {x, sf, out},
       {{"num_per_channels", int64_t{64}}},
       "per_token_cast_with_precomputed_sf: argument 'sf' is f32[100, 4] "
       "strides [4, 1]; requires f32[100, 8]"},
      {"f32 scales where E4M3 ones are asked for",
       {x, sf, out},
       {{"num_per_channels", int64_t{128}}, {"use_e4m3_sf", true}},
       "per_token_cast_with_precomputed_sf: argument 'sf' is f32[100, 4] "
       "strides [4, 1]; requires e4m3[100, 4]"},
  };
  return t;
}

} // namespace tilejit::harness
