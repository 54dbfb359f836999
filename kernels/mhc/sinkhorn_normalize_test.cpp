// sinkhorn_normalize_test.cpp - sinkhorn_normalize's case table:
// TileKernels' shapes, other repeats and sizes, tails, size 0, the benchmark
// shape, and mistakes. Checked with torch.testing.assert_close's fp32
// tolerances.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(sinkhorn_normalize) {
  OpTest t{.op = "sinkhorn_normalize",
           .compare = {{"out", allclose(1.3e-6, 1e-5)}}};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1, 1024, 4096})
      t.cases.push_back({.shape = {n0, n1, 4, 4}});
  for (auto [shape, repeat] : {std::pair{std::vector<int64_t>{77, 4, 4}, "1"},
                               {std::vector<int64_t>{65, 4, 4}, "3"},
                               {std::vector<int64_t>{130, 8, 8}, "10"},
                               {std::vector<int64_t>{3, 2, 2}, "10"},
                               {std::vector<int64_t>{5, 16, 16}, "5"},
                               {std::vector<int64_t>{2, 32, 32}, "2"},
                               {std::vector<int64_t>{0, 4, 4}, "10"}})
    t.cases.push_back({.shape = shape, .set = {{"repeat", repeat}}});
  t.cases.push_back({.shape = {2, 4096, 4, 4}, .kind = Case::bench});

  const auto x = fake(DType::f32, {8, 4, 4});
  t.errors = {
      {"matrices that are not square",
       {fake(DType::f32, {8, 4, 5}), fake(DType::f32, {8, 4, 5})},
       {},
       "sinkhorn_normalize: argument 'x' has shape [8, 4, 5]; requires [..., "
       "n, n] = [8, 4, 4]"},
      {"3 x 3 matrices",
       {fake(DType::f32, {8, 3, 3}), fake(DType::f32, {8, 3, 3})},
       {},
       "sinkhorn_normalize: argument 'x' has 3 x 3 matrices; requires n a "
       "power of two"},
      {"64 x 64 matrices",
       {fake(DType::f32, {2, 64, 64}), fake(DType::f32, {2, 64, 64})},
       {},
       "sinkhorn_normalize: argument 'x' has shape [2, 64, 64] (n = 64); "
       "requires 1 <= n <= 32"},
      {"no rounds",
       {x, x},
       {{"repeat", int64_t{0}}},
       "sinkhorn_normalize: argument 'repeat' is 0; requires 1 to 100"},
      {"a negative eps",
       {x, x},
       {{"eps", -1.0}},
       "sinkhorn_normalize: argument 'eps' is -1; requires a finite value >= "
       "0"},
      {"out of another shape",
       {x, fake(DType::f32, {4, 4, 4})},
       {},
       "sinkhorn_normalize: argument 'out' has shape [4, 4, 4]; requires "
       "[..., n, n] = [8, 4, 4]"},
  };
  return t;
}

} // namespace tilejit::harness

namespace tilejit::harness {

TILEJIT_OP_TEST(mhc_sinkhorn_bwd) {
  // Against the CPU backward (the same steps, sums in another order) with
  // torch.testing.assert_close's fp32 tolerances, as TileKernels checks
  // its kernel against autograd.
  OpTest t{.op = "mhc_sinkhorn_bwd",
           .compare = {{"grad_input", allclose(1.3e-6, 1e-5)}}};
  for (int64_t n0 : {1, 2})
    for (int64_t n1 : {1, 1024, 4096})
      t.cases.push_back({.label = "", .shape = {n0, n1, 4, 4}});
  for (auto [shape, repeat] : {std::pair{std::vector<int64_t>{77, 4, 4}, "1"},
                               {std::vector<int64_t>{65, 4, 4}, "3"},
                               {std::vector<int64_t>{130, 8, 8}, "10"},
                               {std::vector<int64_t>{3, 2, 2}, "10"},
                               {std::vector<int64_t>{0, 4, 4}, "10"}})
    t.cases.push_back(
        {.label = "", .shape = shape, .set = {{"repeat", repeat}}});
  t.cases.push_back(
      {.label = "", .shape = {2, 4096, 4, 4}, .kind = Case::bench});
  t.errors = {{"3 x 3 matrices",
               {fake(DType::f32, {8, 3, 3}), fake(DType::f32, {8, 3, 3}),
                fake(DType::f32, {8, 3, 3})},
               {},
               "mhc_sinkhorn_bwd: argument 'x' has 3 x 3 matrices; requires n "
               "a power of two"}};
  return t;
}

} // namespace tilejit::harness
