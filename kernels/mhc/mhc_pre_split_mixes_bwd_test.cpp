// mhc_pre_split_mixes_bwd_test.cpp - mhc_pre_split_mixes_bwd's case table:
// TileKernels' shapes (4 streams, post_mult 2), other stream counts (1, 3,
// 8, 12, 16), post_mult 0, one token, no tokens, the benchmark shape with
// TileKernels' time, and a mistake. Within TileKernels' rtol 1e-5, atol
// 2e-5 (the sums over tokens in another order; the reference's in
// float64).
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

Case split(std::vector<int64_t> lead, int64_t mhc, int kind = Case::gpu) {
  lead.push_back(mhc);
  return {.label = "",
          .shape = std::move(lead),
          .set = {{"mhc_post_mult_value", "2"}},
          .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(mhc_pre_split_mixes_bwd) {
  const Compare close = allclose(1e-5, 2e-5);
  OpTest t{.op = "mhc_pre_split_mixes_bwd",
           .fills = {{"post_layer_mix", uniform(0, 2)}},
           .compare = {{"input_mixes_grad", close},
                       {"mhc_scale_grad", close},
                       {"mhc_base_grad", close}},
           .poison_outputs = true};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1024, 4096})
      t.cases.push_back(split({n0, n1}, 4));
  for (int64_t mhc : {1, 3, 8, 12, 16})
    t.cases.push_back(split({1, 333}, mhc));
  Case zero_mult = split({1, 100}, 4);
  zero_mult.set["mhc_post_mult_value"] = "0";
  zero_mult.label = "post_mult 0";
  t.cases.push_back(zero_mult);
  t.cases.push_back(split({1, 1}, 4));
  t.cases.push_back(split({1, 0}, 4));
  Case bench = split({2, 4096}, 4, Case::bench);
  bench.peer_us = 20.45;
  t.cases.push_back(bench);
  const auto col = fake(DType::f32, {8, 4, 1}, {}, 0x90000);
  t.errors = {
      {"mixes of another count",
       {col, col, fake(DType::f32, {8, 4, 4}, {}, 0xa0000),
        fake(DType::f32, {8, 20}), col, fake(DType::f32, {3}, {}, 0xb0000),
        fake(DType::f32, {20}, {}, 0xc0000),
        fake(DType::f32, {8, 20}, {}, 0xd0000),
        fake(DType::f32, {3}, {}, 0xe0000),
        fake(DType::f32, {20}, {}, 0xf0000)},
       {},
       "mhc_pre_split_mixes_bwd: argument 'input_mixes' has 20 mixes a "
       "token; requires mhc * (mhc + 2) = 24 (mhc = 4, the streams of "
       "'pre_grad')"}};
  return t;
}

} // namespace tilejit::harness
