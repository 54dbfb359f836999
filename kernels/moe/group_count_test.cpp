// group_count_test.cpp - group_count's case table: ids of TileKernels' MoE
// shapes (4001 tokens, top 2 to 9) over its local expert counts (4 to 256
// groups), some -1, tails of a block, one id a row, no rows, its benchmark
// shape, and mistakes. The counts are compared bytewise.
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

Case counting(std::vector<int64_t> shape, int64_t groups, int kind = Case::gpu,
              double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"num_groups", std::to_string(groups)}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(group_count) {
  OpTest t{.op = "group_count",
           .fills = {{"group_idx", ids_below("num_groups")}},
           // Counts the op must zero: poisoned, a count left unwritten shows.
           .poison_outputs = true};
  // TileKernels' local expert counts: 72 or 256 experts over 8 or 64 ranks.
  for (int64_t groups : {9, 32, 4, 1, 72, 256})
    for (int64_t topk : {2, 8, 9})
      t.cases.push_back(counting({4001, topk}, groups));
  t.cases.push_back(counting({8001, 6}, 288));
  t.cases.push_back(counting({1, 1}, 32));
  t.cases.push_back(counting({37, 7}, 1000));
  t.cases.push_back(counting({0, 8}, 32));
  // TileKernels' benchmark: top 8, 32 experts a rank of 8 (256 in all).
  t.cases.push_back(counting({21760, 8}, 32, Case::bench, 4.20));

  const auto in = fake(DType::i64, {10, 8});
  const auto out = fake(DType::i32, {32}, {}, 0x100000);
  t.errors = {
      {"no groups",
       {in, fake(DType::i32, {0}, {}, 0x100000)},
       {{"num_groups", ops::ParamValue{int64_t{0}}}},
       "group_count: argument 'num_groups' is 0; requires 1 to 1024"},
      {"counts of another length",
       {in, fake(DType::i32, {31}, {}, 0x100000)},
       {},
       "group_count: argument 'counts' has shape [31]; requires [num_groups] "
       "= [32]"},
      {"i32 ids",
       {fake(DType::i32, {10, 8}), out},
       {},
       "group_count: argument 'group_idx' has dtype i32; requires i64"},
  };
  return t;
}

} // namespace tilejit::harness
