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

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_head_compute_mix_bwd) {
  // The input gradient bitwise; the partial rows' sums within TileKernels'
  // rtol 1e-4, atol 1e-5 of the reference's totals.
  OpTest t{.op = "mhc_head_compute_mix_bwd",
           .compare = {{"mhc_scale_grad_partial", rows_summed(1e-4, 1e-5)},
                       {"mhc_base_grad_partial", rows_summed(1e-4, 1e-5)}}};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1024, 4096})
      t.cases.push_back({.label = "", .shape = {n0, n1, 4}});
  for (auto [mhc, sms] : {std::pair<int64_t, const char *>{1, "7"},
                          {3, "132"},
                          {6, "1"},
                          {64, "20"}})
    t.cases.push_back(
        {.label = "", .shape = {1, 333, mhc}, .set = {{"num_sms", sms}}});
  t.cases.push_back({.label = "no tokens", .shape = {1, 0, 4}});
  // TileKernels' 15.15 us is derived (fwd + bwd minus fwd), with its sum of
  // the partials on the host side.
  t.cases.push_back({.label = "", .shape = {2, 4096, 4}, .kind = Case::bench});
  t.errors = {
      {"partial rows of another count",
       {fake(DType::f32, {2, 8, 4}), fake(DType::f32, {2, 8, 4}),
        fake(DType::f32, {1}, {}, 0x90000), fake(DType::f32, {4}, {}, 0xa0000),
        fake(DType::f32, {2, 8, 4}, {}, 0xb0000),
        fake(DType::f32, {132, 1}, {}, 0xc0000),
        fake(DType::f32, {100, 4}, {}, 0xd0000)},
       {},
       "mhc_head_compute_mix_bwd: argument 'mhc_base_grad_partial' has "
       "shape [100, 4]; requires [num_sms, mhc] = [132, 4]"}};
  return t;
}

} // namespace tilejit::harness
