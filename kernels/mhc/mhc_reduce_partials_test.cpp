// mhc_reduce_partials_test.cpp - mhc_reduce_partials_and_rmsnorm's case
// tables: TileKernels' G = 1 at mhc 4 (N3 = 24), 16 splits; several groups
// and other mix counts, one split, no tokens, a benchmark shape. The split
// sums are exact (the same order); out and the gradients go through rsqrtf
// (approximate): allclose.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_reduce_partials_and_rmsnorm_fwd) {
  OpTest t{.op = "mhc_reduce_partials_and_rmsnorm_fwd",
           .fills = {{"sqrsum_splitted", uniform(0, 2000)}},
           .compare = {{"out", allclose(1e-5, 1e-6)}},
           .poison_outputs = true};
  t.cases.push_back({.label = "", .shape = {16, 8192, 1, 24}});
  t.cases.push_back({.label = "",
                     .shape = {4, 1000, 3, 24},
                     .set = {{"rms_group_size", "4096"}}});
  t.cases.push_back({.label = "", .shape = {1, 77, 2, 5}});
  // 4 splits a step (the default unroll): one step and 3 more.
  t.cases.push_back({.label = "", .shape = {7, 300, 2, 24}});
  t.cases.push_back({.label = "", .shape = {16, 33, 1, 64}});
  t.cases.push_back({.label = "no tokens", .shape = {16, 0, 1, 24}});
  t.cases.push_back(
      {.label = "", .shape = {16, 8192, 1, 24}, .kind = Case::bench});
  t.errors = {{"sqrsum of other splits",
               {fake(DType::f32, {16, 8, 1, 24}),
                fake(DType::f32, {8, 8, 1}, {}, 0x900000),
                fake(DType::f32, {8, 1, 24}, {}, 0xa00000),
                fake(DType::f32, {8, 1}, {}, 0xb00000),
                fake(DType::f32, {8, 24}, {}, 0xc00000)},
               {},
               "mhc_reduce_partials_and_rmsnorm_fwd: argument "
               "'sqrsum_splitted' has shape [8, 8, 1]; requires [S, T, G] = "
               "[16, 8, 1]"}};
  return t;
}

TILEJIT_OP_TEST(mhc_reduce_partials_and_rmsnorm_bwd) {
  OpTest t{.op = "mhc_reduce_partials_and_rmsnorm_bwd",
           .fills = {{"sqrsum", uniform(1, 30000)}},
           .compare = {{"out_mul_grad", allclose(1e-5, 1e-8)},
                       {"sqrsum_grad", allclose(1e-4, 1e-10)}},
           .poison_outputs = true};
  t.cases.push_back({.label = "", .shape = {8192, 1, 24}});
  t.cases.push_back({.label = "",
                     .shape = {1000, 3, 24},
                     .set = {{"rms_group_size", "4096"}}});
  t.cases.push_back({.label = "", .shape = {77, 2, 5}});
  t.cases.push_back({.label = "no tokens", .shape = {0, 1, 24}});
  t.cases.push_back({.label = "", .shape = {8192, 1, 24}, .kind = Case::bench});
  t.errors = {{"an out_grad of each group",
               {fake(DType::f32, {8, 2, 24}),
                fake(DType::f32, {8, 2, 24}, {}, 0x900000),
                fake(DType::f32, {8, 2}, {}, 0xa00000),
                fake(DType::f32, {8, 2, 24}, {}, 0xb00000),
                fake(DType::f32, {8, 2}, {}, 0xc00000)},
               {},
               "mhc_reduce_partials_and_rmsnorm_bwd: argument 'out_grad' has "
               "shape [8, 2, 24] (rank 3); requires [T, N3]"}};
  return t;
}

} // namespace tilejit::harness
