// mask_indices_by_tp_test.cpp - mask_indices_by_tp's case table: i64 and
// i32 indices (some negative) of TileKernels' expert counts over 1 to 8 TP
// ranks, every rank of some, tails, no rows, its benchmark shape, and
// mistakes. The output is compared bytewise.
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

Case masking(std::vector<int64_t> shape, int64_t n, int64_t ep, int64_t rank,
             int64_t ranks, DType dtype = DType::i64, int kind = Case::gpu,
             double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"n", std::to_string(n)},
                  {"num_ep_ranks", std::to_string(ep)},
                  {"tp_rank", std::to_string(rank)},
                  {"num_tp_ranks", std::to_string(ranks)}},
          .dtypes = {{"indices", dtype}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(mask_indices_by_tp) {
  OpTest t{.op = "mask_indices_by_tp",
           .fills = {{"indices", uniform(-4.0, 288.0)}}};
  for (int64_t rank = 0; rank < 4; ++rank)
    t.cases.push_back(masking({4001, 8}, 256, 8, rank, 4));
  t.cases.push_back(masking({4001, 6}, 72, 8, 1, 2, DType::i32));
  t.cases.push_back(masking({37, 9}, 288, 72, 0, 1));
  t.cases.push_back(masking({1000, 2}, 256, 64, 7, 8));
  t.cases.push_back(masking({0, 8}, 256, 8, 0, 2));
  t.cases.push_back(masking({32008, 8}, 256, 8, 4, 8, DType::i64, Case::big));
  // TileKernels' benchmark: top 8, 32 experts a rank, ep 8, tp 8, rank 4.
  t.cases.push_back(
      masking({21760, 8}, 256, 8, 4, 8, DType::i64, Case::bench, 2.51));

  const auto in = fake(DType::i64, {10, 8});
  const auto out = fake(DType::i64, {10, 8}, {}, 0x100000);
  t.errors = {
      {"a rank past the ranks",
       {in, out},
       {{"tp_rank", ops::ParamValue{int64_t{2}}},
        {"num_tp_ranks", ops::ParamValue{int64_t{2}}}},
       "mask_indices_by_tp: argument 'tp_rank' is 2; requires tp_rank < "
       "num_tp_ranks = 2"},
      {"fewer experts than ranks",
       {in, out},
       {{"n", ops::ParamValue{int64_t{4}}}},
       "mask_indices_by_tp: argument 'n' is 4; requires at least "
       "num_ep_ranks = 8 (one or more experts a rank)"},
      {"masked of another dtype",
       {in, fake(DType::i32, {10, 8}, {}, 0x100000)},
       {},
       "mask_indices_by_tp: argument 'masked' has dtype i32; requires i64, "
       "the dtype of 'indices'"},
      {"f32 indices",
       {fake(DType::f32, {10, 8}), fake(DType::f32, {10, 8}, {}, 0x100000)},
       {},
       "mask_indices_by_tp: argument 'indices' has dtype f32; requires i64 or "
       "i32"},
  };
  return t;
}

} // namespace tilejit::harness
