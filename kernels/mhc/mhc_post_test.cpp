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
