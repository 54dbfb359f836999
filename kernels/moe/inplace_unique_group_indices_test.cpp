// inplace_unique_group_indices_test.cpp - inplace_unique_group_indices'
// case table: group ids of TileKernels' MoE shapes (4001 tokens, top 2 to 9
// over 8 to 72 groups, so that rows repeat ids), some -1, one group (every
// id a repeat), 32 a row, tails, no rows, its benchmark shape, and
// mistakes. The ids are compared bytewise.
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

Case unique(std::vector<int64_t> shape, int64_t groups, int kind = Case::gpu,
            double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"num_groups", std::to_string(groups)}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(inplace_unique_group_indices) {
  OpTest t{.op = "inplace_unique_group_indices",
           .fills = {{"group_indices", ids_below("num_groups")}},
           .poison_outputs = true};
  for (int64_t groups : {8, 16, 72})
    for (int64_t topk : {2, 6, 8, 9})
      t.cases.push_back(unique({4001, topk}, groups));
  t.cases.push_back(unique({8001, 7}, 1));
  t.cases.push_back(unique({1000, 32}, 128));
  t.cases.push_back(unique({37, 1}, 4));
  t.cases.push_back(unique({0, 8}, 16));
  // TileKernels' benchmark: top 8 of 8 groups, 21760 tokens.
  t.cases.push_back(unique({21760, 8}, 8, Case::bench, 3.47));

  const auto in = fake(DType::i64, {10, 8});
  const auto out = fake(DType::i64, {10, 8}, {}, 0x100000);
  t.errors = {
      {"too many groups",
       {in, out},
       {{"num_groups", ops::ParamValue{int64_t{129}}}},
       "inplace_unique_group_indices: argument 'num_groups' is 129; requires "
       "1 to 128"},
      {"rows of 33 ids",
       {fake(DType::i64, {10, 33}), fake(DType::i64, {10, 33}, {}, 0x100000)},
       {},
       "inplace_unique_group_indices: argument 'group_indices' has shape "
       "[10, 33] (K = 33); requires 1 <= K <= 32"},
      {"i32 ids",
       {fake(DType::i32, {10, 8}), out},
       {},
       "inplace_unique_group_indices: argument 'group_indices' has dtype i32; "
       "requires i64"},
  };
  return t;
}

} // namespace tilejit::harness
