// mhc_post_test.cpp - mhc_post_fwd's case table: the stream ops' shapes
// (stream_cases.h) and a mistake. Bitwise.
#include "mhc/stream_cases.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_post_fwd) {
  OpTest t{.op = "mhc_post_fwd", .poison_outputs = true};
  t.cases = mhc_stream_cases(256.27);
  t.errors = {{"a comb mix of another shape",
               {fake(DType::bf16, {8, 1280}),
                fake(DType::bf16, {8, 4, 1280}, {}, 0x90000),
                fake(DType::f32, {8, 4, 1}, {}, 0xa0000),
                fake(DType::f32, {8, 4, 2}, {}, 0xb0000),
                fake(DType::bf16, {8, 4, 1280}, {}, 0xc0000)},
               {},
               "mhc_post_fwd: argument 'comb_res_mix' has shape [8, 4, 2]; "
               "requires [..., mhc, mhc] = [8, 4, 4]"}};
  return t;
}

} // namespace tilejit::harness

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_post_bwd) {
  // d_x and d_residual bitwise; d_post and d_comb (sums over H in another
  // order) within TileKernels' 1e-4.
  OpTest t{.op = "mhc_post_bwd",
           .compare = {{"d_post", allclose(1e-4, 1e-4)},
                       {"d_comb", allclose(1e-4, 1e-4)}},
           .poison_outputs = true};
  for (Case c : mhc_stream_cases(516.41))
    if (c.shape.end()[-2] == 4)
      t.cases.push_back(std::move(c));
  const auto x = fake(DType::bf16, {8, 1280});
  t.errors = {{"two streams",
               {x, fake(DType::bf16, {8, 2, 1280}, {}, 0x90000),
                fake(DType::f32, {8, 2, 1}, {}, 0xa0000),
                fake(DType::f32, {8, 2, 2}, {}, 0xb0000),
                fake(DType::bf16, {8, 2, 1280}, {}, 0xc0000),
                fake(DType::bf16, {8, 1280}, {}, 0xd0000),
                fake(DType::bf16, {8, 2, 1280}, {}, 0xe0000),
                fake(DType::f32, {8, 2, 1}, {}, 0xf0000),
                fake(DType::f32, {8, 2, 2}, {}, 0x100000)},
               {},
               "mhc_post_bwd: argument 'residual' has 2 streams; requires 4 "
               "(as TileKernels' kernel)"}};
  return t;
}

} // namespace tilejit::harness
