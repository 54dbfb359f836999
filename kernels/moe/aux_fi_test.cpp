// aux_fi_test.cpp - aux_fi's case table: expert ids of TileKernels' MoE
// shapes (4001 tokens, top 2 to 9, 72 to 384 experts, aux top-k 1 or K),
// some -1, tails, no rows (zeros), its benchmark shape, and mistakes. The
// fractions are compared as TileKernels does (calc_diff below 2e-7: a sum
// of per-block fractions in no fixed order).
#include "op_test.h"

#include <string>

namespace tilejit::harness {

namespace {

Case fractions(std::vector<int64_t> shape, int64_t experts, int64_t aux,
               int kind = Case::gpu, double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"num_experts", std::to_string(experts)},
                  {"num_aux_topk", std::to_string(aux)}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(aux_fi) {
  OpTest t{.op = "aux_fi",
           .fills = {{"topk_idx", ids_below("num_experts")}},
           .compare = {{"fi", calc_diff(2e-7)}},
           // Fractions the op must zero: poisoned, one left unwritten shows.
           .poison_outputs = true};
  for (int64_t experts : {72, 256})
    for (int64_t topk : {2, 6, 8, 9})
      for (int64_t aux : {int64_t{1}, topk})
        t.cases.push_back(fractions({4001, topk}, experts, aux));
  t.cases.push_back(fractions({8001, 8}, 384, 8));
  t.cases.push_back(fractions({1, 1}, 4, 1));
  t.cases.push_back(fractions({37, 7}, 1000, 7));
  t.cases.push_back(fractions({0, 8}, 256, 8));
  // TileKernels' benchmark: top 8, 32 experts a rank, aux top 8.
  t.cases.push_back(fractions({21760, 8}, 32, 8, Case::bench, 4.29));

  const auto in = fake(DType::i64, {10, 8});
  t.errors = {
      {"fi of another length",
       {in, fake(DType::f32, {255}, {}, 0x100000)},
       {},
       "aux_fi: argument 'fi' has shape [255]; requires [num_experts] = "
       "[256]"},
      {"no aux top-k",
       {in, fake(DType::f32, {256}, {}, 0x100000)},
       {{"num_aux_topk", ops::ParamValue{int64_t{0}}}},
       "aux_fi: argument 'num_aux_topk' is 0; requires 1 to 1048576"},
      {"f32 ids",
       {fake(DType::f32, {10, 8}), fake(DType::f32, {256}, {}, 0x100000)},
       {},
       "aux_fi: argument 'topk_idx' has dtype f32; requires i64"},
  };
  return t;
}

} // namespace tilejit::harness
