// expand_to_mhc_test.cpp - expand_to_mhc_fwd's and _bwd's case tables:
// the stream ops' shapes (stream_cases.h) and mistakes. Bitwise.
#include "mhc/stream_cases.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(expand_to_mhc_fwd) {
  OpTest t{.op = "expand_to_mhc_fwd", .poison_outputs = true};
  t.cases = mhc_stream_cases(161.39, "mhc_mult");
  t.errors = {{"streams of another row length",
               {fake(DType::bf16, {8, 1280}),
                fake(DType::bf16, {8, 4, 1024}, {}, 0x90000)},
               {},
               "expand_to_mhc_fwd: argument 'o' has shape [8, 4, 1024]; "
               "requires [..., mhc_mult, H] = [8, 4, 1280]"}};
  return t;
}

TILEJIT_OP_TEST(expand_to_mhc_bwd) {
  OpTest t{.op = "expand_to_mhc_bwd", .poison_outputs = true};
  t.cases = mhc_stream_cases(141.69);
  t.errors = {{"a gradient of another row length",
               {fake(DType::bf16, {8, 4, 1280}),
                fake(DType::bf16, {8, 1024}, {}, 0x90000)},
               {},
               "expand_to_mhc_bwd: argument 'x_grad' has shape [8, 1024]; "
               "requires [..., H] = [8, 1280]"}};
  return t;
}

} // namespace tilejit::harness
