// mhc_head_compute_mix_test.cpp - mhc_head_compute_mix_fwd's case table:
// TileKernels' shapes, other stream counts (not a power of two, one,
// many), no tokens, the benchmark shape with TileKernels' time, and a
// mistake. Bitwise (the reference's expf is CUDA's, common/cuda_math.h).
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_head_compute_mix_fwd) {
  OpTest t{.op = "mhc_head_compute_mix_fwd", .poison_outputs = true};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1024, 4096})
      t.cases.push_back({.label = "",
                         .shape = {n0, n1, 4},
                         .set = {{"mhc_pre_eps", "0.01"}}});
  for (int64_t mhc : {1, 3, 6, 64})
    t.cases.push_back({.label = "", .shape = {1, 333, mhc}});
  t.cases.push_back({.label = "no tokens", .shape = {1, 0, 4}});
  t.cases.push_back({.label = "",
                     .shape = {2, 4096, 4},
                     .set = {{"mhc_pre_eps", "0.01"}},
                     .kind = Case::bench,
                     .peer_us = 2.61});
  t.errors = {{"a base of another length",
               {fake(DType::f32, {2, 8, 4}), fake(DType::f32, {1}, {}, 0x90000),
                fake(DType::f32, {3}, {}, 0xa0000),
                fake(DType::f32, {2, 8, 4}, {}, 0xb0000)},
               {},
               "mhc_head_compute_mix_fwd: argument 'mhc_base' has shape [3]; "
               "requires [mhc] = [4]"}};
  return t;
}

} // namespace tilejit::harness
