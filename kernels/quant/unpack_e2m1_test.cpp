// unpack_e2m1_test.cpp - unpack_from_e2m1fn_x2's case table: every byte,
// the three output dtypes, int8 and uint8 input, tails of the 2048-byte
// tile, size 0, a benchmark, and mistakes. Compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(unpack_from_e2m1fn_x2) {
  OpTest t{.op = "unpack_from_e2m1fn_x2", .fills = {{"x", random_bytes()}}};
  for (DType in : {DType::i8, DType::u8})
    for (DType out : {DType::f32, DType::f16, DType::bf16})
      for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1},
                          {3, 7},
                          {64, 32},
                          {33, 1000},
                          {0, 16},
                          {1000, 3584}})
        t.cases.push_back(
            {.shape = {m, n}, .dtypes = {{"x", in}, {"out", out}}});
  t.cases.push_back({.shape = {8192, 3584},
                     .dtypes = {{"out", DType::bf16}},
                     .kind = Case::bench});
  t.errors = {
      {"out of K columns, not 2K",
       {fake(DType::i8, {4, 8}), fake(DType::f32, {4, 8}, {}, 0x100000)},
       {},
       "unpack_from_e2m1fn_x2: argument 'out' is f32[4, 8] strides [8, 1]; "
       "requires f32[4, 16]"},
      {"e4m3 bytes",
       {fake(DType::e4m3, {4, 8}), fake(DType::f32, {4, 16}, {}, 0x100000)},
       {},
       "unpack_from_e2m1fn_x2: argument 'x' has dtype e4m3; requires i8 or "
       "u8"},
  };
  return t;
}

} // namespace tilejit::harness
