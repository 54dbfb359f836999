// batched_transpose_test.cpp - batched_transpose's and transpose's case
// tables: 1-, 2- and 4-byte dtypes, padded rows (the original's row stride
// of 2K, and one that breaks 16-byte alignment), TileKernels' shape, size 0,
// the benchmark shapes, and mistakes.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(batched_transpose) {
  // Random bytes are valid data for a copy (NaN patterns included).
  OpTest t{.op = "batched_transpose", .fills = {{"x", random_bytes()}}};
  for (DType dtype : {DType::e4m3, DType::bf16, DType::f32}) {
    for (auto shape :
         {std::vector<int64_t>{2, 128, 192}, {8, 64, 64}, {1, 448, 576}})
      t.cases.push_back({.shape = shape, .dtypes = {{"", dtype}}});
    t.cases.push_back({.shape = {3, 0, 64}, .dtypes = {{"", dtype}}});
  }
  for (DType dtype : {DType::e4m3, DType::bf16}) {
    t.cases.push_back({.shape = {1, 4032, 576},
                       .dtypes = {{"", dtype}},
                       .row_stride = {{"x", 2 * 576}}});
    t.cases.push_back({.shape = {2, 128, 128},
                       .dtypes = {{"", dtype}},
                       .row_stride = {{"x", 132}}});
  }
  t.cases.push_back({.shape = {0, 64, 64}});
  t.cases.push_back({.shape = {8, 4032, 7168}, .kind = Case::big});
  // With TileKernels' times where measured.
  for (auto [dtype, peer] : {std::pair<DType, double>{DType::bf16, 238.96},
                             {DType::e4m3, 117.86},
                             {DType::f32, 0}})
    t.cases.push_back({.shape = {8, 4032, 7168},
                       .dtypes = {{"", dtype}},
                       .kind = Case::bench,
                       .peer_us = peer});
  t.cases.push_back({.shape = {32, 4096, 4096}, .kind = Case::bench});

  const auto x = fake(DType::bf16, {2, 128, 64});
  const auto out = fake(DType::bf16, {2, 64, 128}, {}, 0x40000);
  t.errors = {
      {"an 8-byte dtype",
       {fake(DType::i64, {2, 128, 64}), out},
       {},
       "batched_transpose: argument 'x' has dtype i64; requires bf16, f16, "
       "f32, e4m3, e5m2, i8, u8, i32, or u32"},
      {"X not a multiple of 64",
       {fake(DType::bf16, {2, 100, 64}), fake(DType::bf16, {2, 64, 100})},
       {},
       "batched_transpose: argument 'x' has shape [2, 100, 64] (X = 100); "
       "requires X a multiple of 64"},
      {"a row stride of 66",
       {fake(DType::bf16, {2, 128, 64}, {8448, 66, 1}), out},
       {},
       "batched_transpose: argument 'x' is bf16[2, 128, 64] strides [8448, "
       "66, 1]; requires stride[2] = 1 and stride[1] a multiple of 4"},
      {"batches not X rows apart",
       {fake(DType::bf16, {2, 128, 64}, {8196, 64, 1}), out},
       {},
       "batched_transpose: argument 'x' has stride[0] = 8196; requires "
       "shape[1] * stride[1] = 8192"},
      {"out not transposed",
       {x, fake(DType::bf16, {2, 128, 64})},
       {},
       "batched_transpose: argument 'out' has shape [2, 128, 64]; requires "
       "[B, Y, X] = [2, 64, 128]"},
      {"out of another dtype",
       {x, fake(DType::f32, {2, 64, 128})},
       {},
       "batched_transpose: argument 'out' has dtype f32; requires bf16, the "
       "dtype of 'x'"},
      {"a strided out",
       {x, fake(DType::bf16, {2, 64, 128}, {16384, 256, 1})},
       {},
       "batched_transpose: argument 'out' is bf16[2, 64, 128] strides "
       "[16384, 256, 1]; requires a contiguous tensor"},
  };
  return t;
}

TILEJIT_OP_TEST(transpose) {
  OpTest t{.op = "transpose", .fills = {{"x", random_bytes()}}};
  t.cases.push_back({.shape = {256, 128}, .dtypes = {{"", DType::f32}}});
  t.cases.push_back({.shape = {448, 576},
                     .dtypes = {{"", DType::e4m3}},
                     .row_stride = {{"x", 1152}}});
  t.cases.push_back({.shape = {0, 64}});
  t.cases.push_back({.shape = {4096, 7168}, .kind = Case::bench});
  t.errors = {
      {"rank 3",
       {fake(DType::bf16, {2, 128, 64}), fake(DType::bf16, {2, 64, 128})},
       {},
       "transpose: argument 'x' has shape [2, 128, 64] (rank 3); requires "
       "[X, Y]"},
      {"Y not a multiple of 64",
       {fake(DType::bf16, {128, 96}), fake(DType::bf16, {96, 128})},
       {},
       "transpose: argument 'x' has shape [128, 96] (Y = 96); requires Y a "
       "multiple of 64"},
  };
  return t;
}

} // namespace tilejit::harness
