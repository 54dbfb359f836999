// per_token_cast_back_test.cpp - per_token_cast_back's case table: bf16 and
// f32 outputs, groups of 32 and 128 and one a row, row-major, column-major
// and packed UE8M0 scales, tails of rows and of the last group, size 0, the
// benchmark shapes, and mistakes.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(per_token_cast_back) {
  // f32 scales N(0, 1); packed ones UE8M0 codes of 2^-27 .. 2^27.
  // e2m1 data: every byte (two codes). E5M6 data: bytes of 0 .. 0x3f, whose
  // codes (normals and subnormals of either sign) have exponent fields up
  // to 28: no infinities or NaNs.
  OpTest t{.op = "per_token_cast_back",
           .fills = {{"x_sf:i32", bytes_in(100, 154)},
                     {"x_data:i8", random_bytes()},
                     {"x_data:u8", bytes_in(0, 0x3f)}}};
  for (DType data : {DType::e4m3, DType::i8})
    for (DType out : {DType::bf16, DType::f32})
      for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 64},
                          {17, 576},
                          {130, 2048},
                          {33, 7168},
                          {0, 512}})
        for (int64_t group : {int64_t{32}, int64_t{128}, k}) {
          const std::map<std::string, std::string> set = {
              {"num_per_channels", std::to_string(group)}};
          t.cases.push_back({.shape = {m, k},
                             .set = set,
                             .dtypes = {{"x_data", data}, {"out", out}}});
          t.cases.push_back({.shape = {m, k},
                             .set = set,
                             .dtypes = {{"x_data", data},
                                        {"out", out},
                                        {"x_sf", DType::i32}}});
          // Column-major f32 scales, M padded to 4.
          t.cases.push_back({.shape = {m, k},
                             .set = set,
                             .dtypes = {{"x_data", data}, {"out", out}},
                             .strides = {{"x_sf", {1, (m + 3) / 4 * 4}}}});
        }
  // Large enough for 64-column tiles (4096 or more: cast_back_spec), with
  // a row tail: every group size and scale layout once.
  for (DType data : {DType::e4m3, DType::i8}) {
    const int64_t m = 4100, k = 8192;
    t.cases.push_back({.shape = {m, k},
                       .set = {{"num_per_channels", "32"}},
                       .dtypes = {{"x_data", data}}});
    t.cases.push_back({.shape = {m, k},
                       .set = {{"num_per_channels", "128"}},
                       .dtypes = {{"x_data", data}, {"x_sf", DType::i32}}});
    t.cases.push_back({.shape = {m, k},
                       .set = {{"num_per_channels", std::to_string(k)}},
                       .dtypes = {{"x_data", data}},
                       .strides = {{"x_sf", {1, (m + 3) / 4 * 4}}}});
  }
  // E5M6 data (x_special_fmt e5m6): one scale a row, as TileKernels
  // tests, and groups of 128.
  for (DType out : {DType::bf16, DType::f32})
    for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 64},
                        {17, 576},
                        {130, 2048},
                        {33, 7168},
                        {0, 512}})
      for (int64_t group : {int64_t{128}, k})
        for (DType sf : {DType::f32, DType::i32})
          t.cases.push_back(
              {.shape = {m, k},
               .set = {{"num_per_channels", std::to_string(group)},
                       {"x_special_fmt", "e5m6"}},
               .dtypes = {{"x_data", DType::u8}, {"out", out}, {"x_sf", sf}}});
  // TileKernels' cast_back_e5m6 grid and benchmark.
  for (int64_t m : {4001, 8001})
    for (int64_t k : {576, 2048, 2560, 3072, 4096, 6144, 7168})
      for (DType out : {DType::bf16, DType::f32})
        t.cases.push_back({.shape = {m, k},
                           .set = {{"num_per_channels", std::to_string(k)},
                                   {"x_special_fmt", "e5m6"}},
                           .dtypes = {{"x_data", DType::u8}, {"out", out}},
                           .kind = Case::big});
  t.cases.push_back(
      {.shape = {8001, 7168},
       .set = {{"num_per_channels", "7168"}, {"x_special_fmt", "e5m6"}},
       .dtypes = {{"x_data", DType::u8}},
       .kind = Case::bench,
       .peer_us = 51.11}); // TileKernels' cast_back_e5m6
  for (auto [m, k, group, peer] :
       {std::tuple<int64_t, int64_t, const char *, double>{8001, 7168, "128",
                                                           44.41},
        {8001, 2048, "128", 0},
        {4001, 576, "128", 0},
        {8001, 7168, "7168", 0}})
    t.cases.push_back({.shape = {m, k},
                       .set = {{"num_per_channels", group}},
                       .dtypes = {{"x_sf", DType::i32}},
                       .kind = Case::bench,
                       .peer_us = peer});
  // TileKernels' e2m1 benchmark (row-major f32 scales).
  t.cases.push_back({.shape = {8001, 7168},
                     .set = {{"num_per_channels", "128"}},
                     .dtypes = {{"x_data", DType::i8}},
                     .kind = Case::bench,
                     .peer_us = 78.44});

  const auto data = fake(DType::e4m3, {100, 512});
  const auto sf = fake(DType::f32, {100, 4}, {}, 0x100000);
  const auto out = fake(DType::bf16, {100, 512}, {}, 0x200000);
  t.errors = {
      {"bf16 data",
       {fake(DType::bf16, {100, 512}), sf, out},
       {},
       "per_token_cast_back: argument 'x_data' has dtype bf16; requires "
       "e4m3, i8, or u8"},
      {"E5M6 words without x_special_fmt",
       {fake(DType::u8, {100, 768}), sf, out},
       {},
       "per_token_cast_back: argument 'x_data' has dtype u8; x_special_fmt "
       "none requires e4m3 or i8 (u8 with x_special_fmt e5m6)"},
      {"x_special_fmt e5m6 with e4m3 data",
       {data, sf, out},
       {{"x_special_fmt", std::string("e5m6")}},
       "per_token_cast_back: argument 'x_data' has dtype e4m3; x_special_fmt "
       "e5m6 requires u8"},
      {"E5M6 words off a 4-byte boundary",
       {fake(DType::u8, {100, 768}, {}, 0x300002), sf, out},
       {{"x_special_fmt", std::string("e5m6")}},
       "per_token_cast_back: argument 'x_data' starts at 0x300002; "
       "x_special_fmt e5m6 requires a 4-byte aligned address (it is read as "
       "32-bit words)"},
      {"K not a multiple of 64",
       {fake(DType::e4m3, {100, 96}), fake(DType::f32, {100, 1}),
        fake(DType::bf16, {100, 96})},
       {},
       "per_token_cast_back: argument 'out' has shape [100, 96] (K = 96); "
       "requires K a multiple of 64"},
      {"e2m1 data of K columns",
       {fake(DType::i8, {100, 512}), sf, out},
       {},
       "per_token_cast_back: argument 'x_data' is i8[100, 512] strides [512, "
       "1]; requires i8[100, 256]"},
      {"a group size of 96",
       {data, sf, out},
       {{"num_per_channels", int64_t{96}}},
       "per_token_cast_back: argument 'num_per_channels' is 96; requires 16, "
       "32, 64, 128, or K = 512"},
      {"scales of another group size",
       {data, sf, out},
       {{"num_per_channels", int64_t{64}}},
       "per_token_cast_back: argument 'x_sf' is f32[100, 4] strides [4, 1]; "
       "requires f32[100, 8]"},
      {"an e4m3 out",
       {data, sf, fake(DType::e4m3, {100, 512})},
       {},
       "per_token_cast_back: argument 'out' has dtype e4m3; requires bf16 or "
       "f32"},
  };
  return t;
}

} // namespace tilejit::harness
