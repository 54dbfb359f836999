// mhc_fn_normw_merge_test.cpp - mhc_fn_normw_merge_fwd's and _bwd's case
// tables: mHC's shapes (24 rows, 4 x H columns), other row counts (1, 3,
// 100), column tails, the benchmark shape, and mistakes. Bitwise but the
// normw gradient (a column sum in another order: within 1e-5).
#include "op_test.h"

namespace tilejit::harness {

namespace {

std::vector<Case> normw_cases() {
  std::vector<Case> cases;
  for (int64_t h : {1280, 2560, 7168})
    cases.push_back({.label = "", .shape = {24, 4 * h}});
  for (auto [rows, k] :
       {std::pair<int64_t, int64_t>{1, 100}, {3, 1030}, {100, 513}, {24, 7}})
    cases.push_back({.label = "", .shape = {rows, k}});
  cases.push_back({.label = "", .shape = {24, 28672}, .kind = Case::bench});
  return cases;
}

} // namespace

TILEJIT_OP_TEST(mhc_fn_normw_merge_fwd) {
  OpTest t{.op = "mhc_fn_normw_merge_fwd", .poison_outputs = true};
  t.cases = normw_cases();
  t.errors = {{"a weight of another length",
               {fake(DType::f32, {24, 1024}), fake(DType::f32, {1000}),
                fake(DType::f32, {24, 1024}, {}, 0x90000)},
               {},
               "mhc_fn_normw_merge_fwd: argument 'normw' has shape [1000]; "
               "requires [K] = [1024]"}};
  return t;
}

TILEJIT_OP_TEST(mhc_fn_normw_merge_bwd) {
  OpTest t{.op = "mhc_fn_normw_merge_bwd",
           .compare = {{"normw_grad_out", allclose(1e-5, 1e-5)}},
           .poison_outputs = true};
  t.cases = normw_cases();
  const auto m = fake(DType::f32, {24, 1024});
  t.errors = {{"a gradient buffer of another shape",
               {m, fake(DType::f32, {1024}, {}, 0x20000), m,
                fake(DType::f32, {24, 1000}, {}, 0x90000),
                fake(DType::f32, {1024}, {}, 0xa0000),
                fake(DType::f32, {24, 1024}, {}, 0xb0000),
                fake(DType::f32, {1024}, {}, 0xc0000)},
               {},
               "mhc_fn_normw_merge_bwd: argument 'fn_grad' has shape [24, "
               "1000]; requires [R, K] = [24, 1024]"}};
  return t;
}

} // namespace tilejit::harness
