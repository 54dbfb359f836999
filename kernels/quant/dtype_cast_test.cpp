// dtype_cast_test.cpp - cast's case table: every pair of f32, bf16 and e4m3,
// sizes with tails of a block and of a vector, several ranks, size 0, values
// beyond e4m3's range (saturation), stochastic rounding's three pairs, the
// benchmark shapes, and mistakes.
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

  // Stochastic rounding (2.1, §2.2 in software): its three pairs over
  // sizes with tails of a block, several ranks, size 0, and a benchmark.
  for (auto [in, out] : {std::pair<DType, DType>{DType::f32, DType::bf16},
                         {DType::bf16, DType::e4m3},
                         {DType::f32, DType::e4m3}}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{4}, {4100}, {3, 5, 8}, {0}, {130, 2048}})
      t.cases.push_back({.shape = shape,
                         .set = {{"stochastic_rounding", "true"}},
                         .dtypes = {{"x", in}, {"out", out}}});
    t.cases.push_back({.shape = {8192, 7168},
                       .set = {{"stochastic_rounding", "true"}},
                       .dtypes = {{"x", in}, {"out", out}},
                       .kind = Case::bench});
  }
  t.errors = {
      {"stochastic rounding of e4m3 to bf16",
       {fake(DType::e4m3, {4, 8}), fake(DType::bf16, {4, 8}, {}, 0x100000)},
       {{"stochastic_rounding", true}},
       "cast: argument 'stochastic_rounding' is true for e4m3 to bf16; "
       "requires f32 to bf16, f32 to e4m3 or bf16 to e4m3"},
      {"stochastic rounding of a partial quad",
       {fake(DType::f32, {2, 3}), fake(DType::e4m3, {2, 3}, {}, 0x100000)},
       {{"stochastic_rounding", true}},
       "cast: argument 'x' has 6 elements; stochastic_rounding requires a "
       "multiple of 4 (quads)"},
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
