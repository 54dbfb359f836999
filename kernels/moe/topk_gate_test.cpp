// topk_gate_test.cpp - topk_gate's case table: TileKernels' (E, K) test
// pairs with tails, size 1 and 0, the benchmark shapes, and mistakes.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(topk_gate) {
  OpTest t{.op = "topk_gate"};
  // TileKernels' (E, K) pairs.
  const std::pair<int64_t, const char *> pairs[] = {
      {72, "6"}, {32, "6"},  {64, "6"},  {96, "6"},  {16, "6"},
      {36, "6"}, {108, "6"}, {128, "6"}, {144, "6"}, {256, "8"}};
  for (auto [e, k] : pairs) {
    for (int64_t rows : {1, 3, 37})
      t.cases.push_back({.shape = {rows, e}, .set = {{"num_topk", k}}});
    for (int64_t rows : {4001, 8001})
      t.cases.push_back(
          {.shape = {rows, e}, .set = {{"num_topk", k}}, .kind = Case::big});
  }
  // Odd expert counts (no vector loads), K = E, K = 1, one expert, no rows.
  t.cases.push_back({.shape = {5, 7}, .set = {{"num_topk", "7"}}});
  t.cases.push_back({.shape = {9, 33}, .set = {{"num_topk", "1"}}});
  t.cases.push_back({.shape = {2, 1}, .set = {{"num_topk", "1"}}});
  t.cases.push_back({.shape = {0, 64}, .set = {{"num_topk", "6"}}});
  t.cases.push_back({.shape = {40, 1000}, .set = {{"num_topk", "4"}}});
  t.cases.push_back({.shape = {8001, 256},
                     .set = {{"num_topk", "8"}},
                     .kind = Case::bench,
                     .peer_us = 10.89});
  t.cases.push_back({.shape = {8001, 72},
                     .set = {{"num_topk", "6"}},
                     .kind = Case::bench,
                     .peer_us = 7.43});

  const auto scores = fake(DType::f32, {10, 72});
  const auto idx = fake(DType::i64, {10, 6});
  t.errors = {
      {"bf16 scores",
       {fake(DType::bf16, {10, 72}), idx},
       {{"num_topk", int64_t{6}}},
       "topk_gate: argument 'scores' has dtype bf16; requires f32"},
      {"more picks than experts",
       {scores, fake(DType::i64, {10, 73})},
       {{"num_topk", int64_t{73}}},
       "topk_gate: argument 'num_topk' is 73; requires num_topk <= E = 72"},
      {"too many experts for one warp's registers",
       {fake(DType::f32, {10, 2000}), idx},
       {{"num_topk", int64_t{6}}},
       "topk_gate: argument 'scores' has shape [10, 2000] (E = 2000); "
       "requires 1 <= E <= 1024"},
      {"i32 indices",
       {scores, fake(DType::i32, {10, 6})},
       {{"num_topk", int64_t{6}}},
       "topk_gate: argument 'topk_idx' has dtype i32; requires i64"},
      {"indices of another width",
       {scores, fake(DType::i64, {10, 5})},
       {{"num_topk", int64_t{6}}},
       "topk_gate: argument 'topk_idx' has shape [10, 5]; requires [T, "
       "num_topk] = [10, 6]"},
      {"strided indices",
       {scores, fake(DType::i64, {10, 6}, {12, 1})},
       {{"num_topk", int64_t{6}}},
       "topk_gate: argument 'topk_idx' is i64[10, 6] strides [12, 1]; "
       "requires a contiguous tensor"},
      {"no picks",
       {scores, fake(DType::i64, {10, 0})},
       {{"num_topk", int64_t{0}}},
       "topk_gate: argument 'num_topk' is 0; requires 1 to 1024"},
  };
  return t;
}

} // namespace tilejit::harness
