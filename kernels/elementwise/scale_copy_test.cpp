// scale_copy_test.cpp - scale_copy's case table: a shape sweep with tails,
// size 1 and 0, padded rows, the benchmark shapes, and mistakes.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(scale_copy) {
  OpTest t{.op = "scale_copy", .fills = {{"x", uniform(-4, 4)}}};
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1},
                            {1, 129},
                            {33, 1},
                            {31, 127},
                            {32, 128},
                            {33, 130},
                            {257, 1000},
                            {4096, 7168},
                            {0, 5},
                            {5, 0}})
    t.cases.push_back({.shape = {rows, cols}});
  t.cases.push_back({.shape = {33, 130}, .set = {{"scale", "-0.25"}}});
  // Rows 8 bytes apart from 16-byte alignment: no vectors.
  t.cases.push_back({.shape = {65, 256}, .row_stride = {{"x", 258}}});
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 7168},
                            {8192, 8192},
                            {16384, 16384},
                            {8191, 8193}})
    t.cases.push_back({.shape = {rows, cols}, .kind = Case::bench});

  const auto x = fake(DType::f32, {4, 8});
  const auto out = fake(DType::f32, {4, 8}, {}, 0x20000);
  t.errors = {
      {"bf16 input",
       {fake(DType::bf16, {4, 8}), out},
       {},
       "scale_copy: argument 'x' has dtype bf16; requires f32"},
      {"rank 3",
       {fake(DType::f32, {2, 4, 8}), fake(DType::f32, {2, 4, 8})},
       {},
       "scale_copy: argument 'x' has shape [2, 4, 8] (rank 3); requires [M, "
       "N]"},
      {"out of another shape",
       {x, fake(DType::f32, {8, 4})},
       {},
       "scale_copy: argument 'out' has shape [8, 4]; requires [M, N] = [4, "
       "8]"},
      {"null pointer",
       {fake(DType::f32, {4, 8}, {}, 0), out},
       {},
       "scale_copy: argument 'x' is a null pointer with shape [4, 8]; "
       "requires device memory"},
      {"misaligned output",
       {x, fake(DType::f32, {4, 8}, {}, 0x10002)},
       {},
       "scale_copy: argument 'out' has address 0x10002; requires 4-byte "
       "alignment"},
      {"negative stride",
       {fake(DType::f32, {4, 8}, {-8, 1}), out},
       {},
       "scale_copy: argument 'x' has stride[0] = -8; requires a non-negative "
       "stride"},
      {"an infinite scale",
       {x, out},
       {{"scale", std::numeric_limits<double>::infinity()}},
       "scale_copy: argument 'scale' is inf; requires a finite value"},
  };
  return t;
}

} // namespace tilejit::harness
