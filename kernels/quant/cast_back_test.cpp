// cast_back_test.cpp - cast_back's case table: e4m3 and e2m1 data, bf16 and
// f32 out, the block sizes TileKernels tests ((1, 128), (1, K), (128, 1),
// (128, 128)) and (32, 32), (1, 16); f32, column-major and packed scales;
// tails of rows; size 0; 64-column tiles; the benchmark shapes; mistakes.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(cast_back) {
  // f32 scales N(0, 1); packed ones UE8M0 codes of 2^-27 .. 2^27; e2m1 data
  // every byte (two codes).
  OpTest t{.op = "cast_back",
           .fills = {{"x_sf:i32", bytes_in(100, 154)},
                     {"x_data:i8", random_bytes()},
                     {"x_data:u8", bytes_in(0, 0x3f)}}};
  for (DType data : {DType::e4m3, DType::i8})
    for (DType out : {DType::bf16, DType::f32})
      for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 64},
                          {130, 576},
                          {257, 2048},
                          {0, 512}})
        for (auto [bm, bk] : {std::pair<int64_t, int64_t>{1, 128},
                              {1, k},
                              {1, 16},
                              {128, 1},
                              {128, 128},
                              {32, 32}}) {
          const std::map<std::string, std::string> set = {
              {"bm", std::to_string(bm)}, {"bk", std::to_string(bk)}};
          const std::map<std::string, DType> dtypes = {{"x_data", data},
                                                       {"out", out}};
          t.cases.push_back({.shape = {m, k}, .set = set, .dtypes = dtypes});
          auto packed = dtypes;
          packed["x_sf"] = DType::i32;
          t.cases.push_back({.shape = {m, k}, .set = set, .dtypes = packed});
          // Column-major f32 scales, M' padded to 4.
          const int64_t rows = (m + bm - 1) / bm;
          t.cases.push_back({.shape = {m, k},
                             .set = set,
                             .dtypes = dtypes,
                             .strides = {{"x_sf", {1, (rows + 3) / 4 * 4}}}});
        }
  // Large enough for 64-column tiles (4096 or more: cast_back_spec), with
  // a row tail.
  for (DType data : {DType::e4m3, DType::i8})
    for (auto [bm, bk, sf] :
         {std::tuple<int64_t, int64_t, DType>{128, 1, DType::f32},
          {32, 32, DType::i32},
          {1, 16, DType::f32}})
      t.cases.push_back(
          {.shape = {4100, 8192},
           .set = {{"bm", std::to_string(bm)}, {"bk", std::to_string(bk)}},
           .dtypes = {{"x_data", data}, {"x_sf", sf}}});
  // E5M6 data (x_special_fmt e5m6; bytes whose codes are finite): one scale
  // a row, as TileKernels tests, and blocks.
  for (auto [m, k] : {std::pair<int64_t, int64_t>{33, 576}, {130, 2048}})
    for (auto [bm, bk] :
         {std::pair<int64_t, int64_t>{1, k}, {128, 128}, {32, 32}})
      t.cases.push_back({.shape = {m, k},
                         .set = {{"bm", std::to_string(bm)},
                                 {"bk", std::to_string(bk)},
                                 {"x_special_fmt", "e5m6"}},
                         .dtypes = {{"x_data", DType::u8}}});
  // With TileKernels' times where measured.
  for (auto [bm, bk, peer] :
       {std::tuple<const char *, const char *, double>{"128", "128", 79.34},
        {"128", "1", 54.78},
        {"1", "128", 0}})
    t.cases.push_back({.shape = {8001, 7168},
                       .set = {{"bm", bm}, {"bk", bk}},
                       .kind = Case::bench,
                       .peer_us = peer});

  const auto data = fake(DType::e4m3, {256, 512});
  const auto sf = fake(DType::f32, {2, 4}, {}, 0x100000);
  const auto out = fake(DType::bf16, {256, 512}, {}, 0x200000);
  t.errors = {
      {"a block of 64 rows",
       {data, sf, out},
       {{"bm", int64_t{64}}, {"bk", int64_t{128}}},
       "cast_back: argument 'bm' is 64; requires 1, 32 or 128"},
      {"a block of 96 channels",
       {data, sf, out},
       {{"bm", int64_t{128}}, {"bk", int64_t{96}}},
       "cast_back: argument 'bk' is 96; requires 1, 16, 32, 64, 128, or K = "
       "512"},
      {"per-token scales for 128-row blocks",
       {data, fake(DType::f32, {256, 4}, {}, 0x100000), out},
       {{"bm", int64_t{128}}, {"bk", int64_t{128}}},
       "cast_back: argument 'x_sf' is f32[256, 4] strides [4, 1]; requires "
       "f32[2, 4]"},
  };
  return t;
}

} // namespace tilejit::harness
