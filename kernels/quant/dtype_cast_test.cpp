// dtype_cast_test.cpp - cast's case table: every pair of f32, bf16 and e4m3,
// sizes with tails of a block and of a vector, several ranks, size 0, values
// beyond e4m3's range (saturation), the benchmark shapes, and mistakes.
// Outputs are compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(cast) {
  // N(0, 300): about half the values saturate in e4m3.
  OpTest t{.op = "cast", .fills = {{"x", normal(0, 300)}}};
  const DType kinds[] = {DType::f32, DType::bf16, DType::e4m3};
  for (DType in : kinds)
    for (DType out : kinds)
      for (std::vector<int64_t> shape :
           {std::vector<int64_t>{1}, {4097}, {3, 5, 7}, {0}, {130, 2050}})
        t.cases.push_back(
            {.shape = shape, .dtypes = {{"x", in}, {"out", out}}});
  for (auto [in, out] : {std::pair<DType, DType>{DType::f32, DType::bf16},
                         {DType::bf16, DType::e4m3},
                         {DType::f32, DType::e4m3}})
    t.cases.push_back({.shape = {8192, 7168},
                       .dtypes = {{"x", in}, {"out", out}},
                       .kind = Case::bench});

  t.errors = {
      {"an i32 out",
       {fake(DType::f32, {4, 8}), fake(DType::i32, {4, 8}, {}, 0x100000)},
       {},
       "cast: argument 'out' has dtype i32; requires f32, bf16, or e4m3"},
      {"out of another shape",
       {fake(DType::f32, {4, 8}), fake(DType::bf16, {8, 4}, {}, 0x100000)},
       {},
       "cast: argument 'out' has shape [8, 4]; requires [...] = [4, 8]"},
  };
  return t;
}

} // namespace tilejit::harness
