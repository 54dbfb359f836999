// mhc_pre_split_mixes_test.cpp - mhc_pre_split_mixes_fwd's case table:
// TileKernels' shapes (4 streams, post_mult 2, pre_eps 0.01), other stream
// counts (1, 3, 8, 16), no tokens, the benchmark shape with TileKernels'
// time, and a mistake. Bitwise (the reference's expf is CUDA's).
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

Case split(std::vector<int64_t> lead, int64_t mhc, int kind = Case::gpu) {
  lead.push_back(mhc * (mhc + 2));
  return {.label = "",
          .shape = std::move(lead),
          .set = {{"mhc_mult", std::to_string(mhc)},
                  {"mhc_post_mult_value", "2"},
                  {"mhc_pre_eps", "0.01"}},
          .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(mhc_pre_split_mixes_fwd) {
  OpTest t{.op = "mhc_pre_split_mixes_fwd", .poison_outputs = true};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1024, 4096})
      t.cases.push_back(split({n0, n1}, 4));
  for (int64_t mhc : {1, 3, 8, 16})
    t.cases.push_back(split({1, 333}, mhc));
  t.cases.push_back(split({1, 0}, 4));
  Case bench = split({2, 4096}, 4, Case::bench);
  bench.peer_us = 2.72;
  t.cases.push_back(bench);
  t.errors = {{"mixes of another count",
               {fake(DType::f32, {8, 20}), fake(DType::f32, {3}, {}, 0x90000),
                fake(DType::f32, {20}, {}, 0xa0000),
                fake(DType::f32, {8, 4, 1}, {}, 0xb0000),
                fake(DType::f32, {8, 4, 1}, {}, 0xc0000),
                fake(DType::f32, {8, 4, 4}, {}, 0xd0000)},
               {},
               "mhc_pre_split_mixes_fwd: argument 'input_mixes' has 20 mixes a "
               "token; requires mhc_mult * (mhc_mult + 2) = 24"}};
  return t;
}

} // namespace tilejit::harness
