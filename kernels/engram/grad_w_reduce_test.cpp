// grad_w_reduce_test.cpp - grad_w_reduce's case table: TileKernels' shapes
// (B = the H200's 132 SMs, 4 heads, D multiples of 512) with gradients so
// far of randn, other B (4: one row a group; 8; 0: nothing added), a head,
// the benchmark shape with TileKernels' time, and mistakes. The sum over B
// in another order than the reference's (f64): calc_diff < 1e-10, the
// spec's bound.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(grad_w_reduce) {
  OpTest t{.op = "grad_w_reduce",
           .compare = {{"grad_weight_hidden_out", calc_diff(1e-10)},
                       {"grad_weight_embed_out", calc_diff(1e-10)}}};
  for (int64_t d : {512, 2560, 7168})
    t.cases.push_back({.label = "", .shape = {132, 4, d}});
  t.cases.push_back({.label = "", .shape = {4, 4, 1024}});
  t.cases.push_back({.label = "", .shape = {8, 1, 512}});
  t.cases.push_back({.label = "no partial rows", .shape = {0, 4, 512}});
  t.cases.push_back({.label = "",
                     .shape = {132, 4, 7168},
                     .kind = Case::bench,
                     .peer_us = 6.21});
  auto call = [](int64_t b, int64_t d) {
    return std::vector<rt::TensorView>{fake(DType::f32, {b, 4, d}),
                                       fake(DType::bf16, {4, d}, {}, 0x900000),
                                       fake(DType::bf16, {4, d}, {}, 0xa00000),
                                       fake(DType::f32, {4, d}, {}, 0xb00000),
                                       fake(DType::f32, {4, d}, {}, 0xc00000),
                                       fake(DType::f32, {4, d}, {}, 0xb00000),
                                       fake(DType::f32, {4, d}, {}, 0xc00000)};
  };
  t.errors = {{"B of 130",
               call(130, 512),
               {},
               "grad_w_reduce: argument 'grad_w_partial' has shape [130, 4, "
               "512] (B = 130); requires B a multiple of 4"},
              {"D of 768",
               call(132, 768),
               {},
               "grad_w_reduce: argument 'grad_w_partial' has shape [132, 4, "
               "768] (D = 768); requires D a multiple of 512"}};
  return t;
}

} // namespace tilejit::harness
