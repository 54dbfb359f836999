// mhc_pre_norm_fn_gemm_bwd_test.cpp - the case table: TileKernels'
// pre_norm_fn backward shapes (4096 and 8192 tokens, H 1280 to 7168, mhc 4),
// a partial token and column tile, 1 and 2 streams, no x_grad to add to,
// few and no tokens (fn_grad at the default 2 stages), the same at 0, 1
// and 3 stages, the benchmark
// shape (with and without), mistakes. The reference sums in
// float64 with the kernel's TF32 operands: x_grad within bf16's
// assert_close defaults (TileKernels' bound), fn_grad within its atol 3e-2,
// rtol 1e-3.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_pre_norm_fn_gemm_bwd) {
  OpTest t{.op = "mhc_pre_norm_fn_gemm_bwd",
           .fills = {{"fn", normal(0, 1e-4)},
                     {"out_mul_grad", normal(0, 1)},
                     {"sqrsum_grad", normal(0, 1e-4)}},
           .compare = {{"x_grad_out", allclose(1.6e-2, 1e-5)},
                       {"fn_grad", allclose(1e-3, 3e-2)}},
           .poison_outputs = true};
  for (int64_t tokens : {4096, 8192})
    for (int64_t h : {1280, 2560, 7168})
      t.cases.push_back({.label = "", .shape = {tokens, 4, h}});
  t.cases.push_back({.label = "partial tiles", .shape = {77, 4, 1040}});
  t.cases.push_back({.label = "new x_grad",
                     .shape = {300, 4, 1280},
                     .set = {{"x_grad", "none"}}});
  t.cases.push_back({.label = "", .shape = {100, 2, 512}});
  t.cases.push_back({.label = "", .shape = {100, 1, 256}});
  t.cases.push_back({.label = "", .shape = {5, 4, 64}});
  t.cases.push_back({.label = "mhc_head's fn",
                     .shape = {300, 4, 1280},
                     .set = {{"M3", "4"}}});
  t.cases.push_back({.label = "no tokens", .shape = {0, 4, 1280}});
  // fn_grad's tiles transposed through registers (0) or copied 1 or 3
  // stages ahead and multiplied transposed (the default is 2): TileKernels'
  // shape, partial token and column tiles, no x_grad, mhc 2
  // and 1 (rows of 8 and 3 mixes: 16- and 4-byte copies), few and no
  // tokens, mhc_head's fn.
  for (const char *stages : {"0", "1", "3"}) {
    std::vector<Case> cases = {
        {.label = "", .shape = {4096, 4, 2560}},
        {.label = "", .shape = {77, 4, 1040}},
        {.label = "", .shape = {300, 4, 1280}, .set = {{"x_grad", "none"}}},
        {.label = "", .shape = {100, 2, 512}},
        {.label = "", .shape = {100, 1, 256}},
        {.label = "", .shape = {5, 4, 64}},
        {.label = "", .shape = {300, 4, 1280}, .set = {{"M3", "4"}}},
        {.label = "", .shape = {0, 4, 1280}}};
    for (Case &c : cases) {
      c.label = std::string("stages ") + stages;
      c.set["stages"] = stages;
      t.cases.push_back(c);
    }
  }
  for (const char *stages : {"0", "2"})
    t.cases.push_back({.label = std::string("stages ") + stages,
                       .shape = {8192, 4, 7168},
                       .set = {{"stages", stages}},
                       .kind = Case::bench});

  const auto x = fake(DType::bf16, {8, 4, 64}, {}, 0x300000);
  t.errors = {{"fn of another H",
               {fake(DType::f32, {8, 24}), fake(DType::f32, {8}, {}, 0x100000),
                x, fake(DType::f32, {24, 512}, {}, 0x400000), ops::absent(),
                fake(DType::bf16, {8, 4, 64}, {}, 0x500000),
                fake(DType::f32, {24, 512}, {}, 0x600000)},
               {},
               "mhc_pre_norm_fn_gemm_bwd: argument 'fn' has shape [24, 512]; "
               "requires [M3, mhc * H] = [24, 256]"}};
  return t;
}

} // namespace tilejit::harness
