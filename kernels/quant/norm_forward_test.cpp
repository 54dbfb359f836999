// norm_forward_test.cpp - norm_forward's case table: bf16 and f32, with
// and without weight, residual and rstd, 3-D x, H not a multiple of 256
// (a partial chunk), one row, no rows, the benchmark shape, mistakes. The
// reference sums in float64 and uses an exact rsqrt: out within a bf16/f32
// rounding, rstd within f32 tolerance; residual_out exact.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(norm_forward) {
  // out within a rounding of its dtype: bf16's 2^-8, f32's few ulp.
  const Compare out = by_dtype(allclose(8e-3, 1e-5), allclose(2e-6, 1e-7));
  OpTest t{.op = "norm_forward",
           .compare = {{"out", out}, {"rstd", allclose(2e-6, 0)}}};
  const std::map<std::string, std::string> all = {
      {"residual", "passed"}, {"residual_out", "passed"}, {"rstd", "passed"}};
  for (DType dt : {DType::bf16, DType::f32}) {
    t.cases.push_back(
        {.label = "", .shape = {4096, 7168}, .dtypes = {{"", dt}}});
    t.cases.push_back({.label = "residual, rstd",
                       .shape = {1000, 4096},
                       .set = all,
                       .dtypes = {{"", dt}}});
  }
  t.cases.push_back({.label = "no weight, out_scale",
                     .shape = {300, 2048},
                     .set = {{"weight", "none"}, {"out_scale", "0.5"}}});
  t.cases.push_back({.label = "3-D", .shape = {2, 100, 1536}, .set = all});
  t.cases.push_back(
      {.label = "partial chunk", .shape = {64, 4112}, .set = all});
  t.cases.push_back({.label = "", .shape = {1, 16}});
  t.cases.push_back({.label = "no rows", .shape = {0, 1024}});
  t.cases.push_back({.label = "", .shape = {8192, 7168}, .kind = Case::bench});
  t.errors = {
      {"residual without residual_out",
       {fake(DType::bf16, {8, 1024}), fake(DType::bf16, {1024}, {}, 0x900000),
        fake(DType::bf16, {8, 1024}, {}, 0xa00000),
        fake(DType::bf16, {8, 1024}, {}, 0xb00000), ops::absent(),
        ops::absent()},
       {},
       "norm_forward: argument 'residual' is passed without "
       "'residual_out'; requires both or neither"},
      {"H of 1000",
       {fake(DType::bf16, {8, 1000}), ops::absent(), ops::absent(),
        fake(DType::bf16, {8, 1000}, {}, 0xb00000), ops::absent(),
        ops::absent()},
       {},
       "norm_forward: argument 'x' has shape [8, 1000] (H = 1000); "
       "requires 16 <= H <= 8192 and H a multiple of 16"}};
  return t;
}

} // namespace tilejit::harness
