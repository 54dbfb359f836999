// norm_backward_test.cpp - norm_backward's case table: bf16 and f32, with
// and without weight, residual_out_grad and a weight_grad to add to (f32
// and bf16), a new weight gradient in either dtype, H not a multiple of
// 256 (a partial chunk), small H, one row, no rows, the benchmark shape,
// mistakes. The reference sums in float64: x_grad within a rounding of its
// dtype, weight_grad_out within calc_diff bounds (sums of T terms in
// another order).
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(norm_backward) {
  OpTest t{.op = "norm_backward",
           .fills = {{"rstd", uniform(0.5, 2)}},
           .compare = {{"x_grad",
                        by_dtype(allclose(8e-3, 1e-5), allclose(1e-5, 1e-5))},
                       {"weight_grad_out",
                        by_dtype(calc_diff(2e-7), calc_diff(1e-10))}},
           .poison_outputs = true};
  const std::map<std::string, std::string> accumulate = {
      {"weight_grad", "passed"}, {"residual_out_grad", "passed"}};
  for (DType dt : {DType::bf16, DType::f32}) {
    t.cases.push_back(
        {.label = "", .shape = {4096, 7168}, .dtypes = {{"", dt}}});
    t.cases.push_back({.label = "residual, accumulated",
                       .shape = {1000, 4096},
                       .set = accumulate,
                       .dtypes = {{"", dt}}});
  }
  t.cases.push_back({.label = "a bf16 weight_grad accumulated",
                     .shape = {777, 2048},
                     .set = accumulate,
                     .dtypes = {{"weight_grad", DType::bf16},
                                {"weight_grad_out", DType::bf16}}});
  t.cases.push_back({.label = "a new bf16 weight_grad, out_scale",
                     .shape = {300, 1536},
                     .set = {{"out_scale", "0.5"}},
                     .dtypes = {{"weight_grad_out", DType::bf16}}});
  t.cases.push_back({.label = "no weight",
                     .shape = {300, 2048},
                     .set = {{"weight", "none"}, {"weight_grad_out", "none"}}});
  t.cases.push_back({.label = "no weight_grad asked",
                     .shape = {300, 2048},
                     .set = {{"weight_grad_out", "none"}}});
  t.cases.push_back(
      {.label = "partial chunk", .shape = {64, 4128}, .set = accumulate});
  t.cases.push_back({.label = "small H", .shape = {100, 32}});
  t.cases.push_back({.label = "", .shape = {1, 7168}});
  t.cases.push_back(
      {.label = "no rows", .shape = {0, 1024}, .set = accumulate});
  t.cases.push_back({.label = "", .shape = {8192, 7168}, .kind = Case::bench});
  const auto og = fake(DType::bf16, {8, 1024}),
             x = fake(DType::bf16, {8, 1024}, {}, 0x100000);
  const auto w = fake(DType::bf16, {1024}, {}, 0x200000);
  const auto rstd = fake(DType::f32, {8}, {}, 0x300000);
  const auto dx = fake(DType::bf16, {8, 1024}, {}, 0x400000);
  const auto none = ops::absent();
  t.errors = {
      {"weight_grad_out without weight",
       {og, x, none, rstd, none, none, dx,
        fake(DType::f32, {1024}, {}, 0x500000)},
       {},
       "norm_backward: argument 'weight_grad_out' is asked for without "
       "'weight'; requires a weight"},
      {"weight_grad without weight_grad_out",
       {og, x, w, rstd, none, fake(DType::f32, {1024}, {}, 0x500000), dx, none},
       {},
       "norm_backward: argument 'weight_grad' is passed without "
       "'weight_grad_out'; requires both (the sum is written there: the same "
       "buffer to accumulate in place)"},
      {"weight_grad_out of another dtype",
       {og, x, w, rstd, none, fake(DType::f32, {1024}, {}, 0x500000), dx,
        fake(DType::bf16, {1024}, {}, 0x500000)},
       {},
       "norm_backward: argument 'weight_grad_out' has dtype bf16; requires "
       "weight_grad's dtype f32"},
      {"H of 48",
       {fake(DType::bf16, {8, 48}), fake(DType::bf16, {8, 48}, {}, 0x100000),
        fake(DType::bf16, {48}, {}, 0x200000), rstd, none, none,
        fake(DType::bf16, {8, 48}, {}, 0x400000), none},
       {},
       "norm_backward: argument 'out_grad' has shape [8, 48] (H = 48); "
       "requires 32 <= H <= 8192 and H a multiple of 32"}};
  return t;
}

} // namespace tilejit::harness
