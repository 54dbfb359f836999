// mhc_pre_apply_mix_test.cpp - mhc_pre_apply_mix_fwd's case table: the
// stream ops' shapes (stream_cases.h) and a mistake. Bitwise.
#include "mhc/stream_cases.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_pre_apply_mix_fwd) {
  OpTest t{.op = "mhc_pre_apply_mix_fwd", .poison_outputs = true};
  // TileKernels' figure is at H = 7680 (147.77 us), not this shape.
  t.cases = mhc_stream_cases(0);
  t.errors = {{"a mix of another stream count",
               {fake(DType::bf16, {8, 4, 1280}),
                fake(DType::f32, {8, 2, 1}, {}, 0x90000),
                fake(DType::bf16, {8, 1280}, {}, 0xa0000)},
               {},
               "mhc_pre_apply_mix_fwd: argument 'mix' has shape [8, 2, 1]; "
               "requires [..., mhc, 1] = [8, 4, 1]"}};
  return t;
}

} // namespace tilejit::harness

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_pre_apply_mix_bwd) {
  // x_grad_out bitwise; mix_grad (a sum over H in another order) within
  // 1e-4 (TileKernels checks 1e-2 / 1e-3).
  OpTest t{.op = "mhc_pre_apply_mix_bwd",
           .compare = {{"mix_grad", allclose(1e-4, 1e-4)}},
           .poison_outputs = true};
  // TileKernels' figure is at H = 7680 (389.89 us, derived), not this shape.
  t.cases = mhc_stream_cases(0);
  const auto x = fake(DType::bf16, {8, 4, 1280}, {}, 0x90000);
  t.errors = {{"a gradient so far of another shape",
               {fake(DType::bf16, {8, 1280}), x,
                fake(DType::f32, {8, 4, 1}, {}, 0xa0000),
                fake(DType::bf16, {8, 4, 1024}, {}, 0xb0000),
                fake(DType::bf16, {8, 4, 1280}, {}, 0xc0000),
                fake(DType::f32, {8, 4, 1}, {}, 0xd0000)},
               {},
               "mhc_pre_apply_mix_bwd: argument 'x_grad' has shape [8, 4, "
               "1024]; requires [..., mhc, H] = [8, 4, 1280]"}};
  return t;
}

} // namespace tilejit::harness
