// reduce_fused_test.cpp - reduce_fused's case table: TileKernels' top-k
// counts and hidden sizes, f32 and bf16 in, the same dtype or e4m3 out,
// with and without weights, x_sf and sf, three slots in four of -1 (as an
// expert-parallel rank sees them), its benchmark shapes, and mistakes. The
// output is compared bytewise.
#include "op_test.h"

namespace tilejit::harness {

namespace {

/// --shape T x K x N x H; `out` e4m3 (with sf) or x's dtype.
Case reduce(std::vector<int64_t> shape, DType in, bool fp8, bool weights,
            bool x_sf, int kind = Case::gpu, double peer_us = 0) {
  return {.label = "",
          .shape = std::move(shape),
          .set = {{"topk_weights", weights ? "passed" : "none"},
                  {"x_sf", x_sf ? "passed" : "none"},
                  {"sf", fp8 ? "passed" : "none"}},
          .dtypes = {{"x", in}, {"out", fp8 ? DType::e4m3 : in}},
          .kind = kind,
          .peer_us = peer_us};
}

} // namespace

TILEJIT_OP_TEST(reduce_fused) {
  OpTest t{.op = "reduce_fused",
           .fills = {{"topk_weights", uniform(0.0, 1.0)},
                     {"token_topk_to_pos", row_indices("x", 0.75)}}};
  for (DType in : {DType::bf16, DType::f32})
    for (bool fp8 : {false, true})
      for (bool weights : {false, true})
        for (bool x_sf : {false, true})
          t.cases.push_back(reduce({37, 6, 64, 2560}, in, fp8, weights, x_sf));
  // Top-k counts, hidden sizes (block_h 256, 512, 1024), tails, no tokens.
  for (int64_t topk : {1, 2, 8, 9})
    t.cases.push_back(reduce({129, topk, 129 * topk / 4 + 1, 7168}, DType::bf16,
                             false, true, false));
  t.cases.push_back(reduce({5, 8, 7, 256}, DType::bf16, true, true, true));
  t.cases.push_back(reduce({64, 8, 100, 3072}, DType::f32, false, true, true));
  t.cases.push_back(reduce({0, 6, 16, 2048}, DType::bf16, false, true, false));
  t.cases.push_back(reduce({1, 32, 40, 512}, DType::bf16, false, true, false));
  t.cases.push_back(
      reduce({4001, 8, 8002, 7168}, DType::bf16, true, true, true, Case::big));
  // TileKernels' benchmark (top 6 of 256 experts, 32 of them local): about
  // 17.6k tokens routed here, 26.4k of their slots valid.
  for (bool fp8 : {false, true})
    t.cases.push_back(reduce({17600, 6, 26400, 7168}, DType::bf16, fp8, true,
                             fp8, Case::bench, fp8 ? 121.21 : 154.58));

  const auto x = fake(DType::bf16, {40, 512});
  const auto w = fake(DType::f32, {10, 6}, {}, 0x100000);
  const auto pos = fake(DType::i32, {10, 6}, {}, 0x200000);
  const auto out = fake(DType::bf16, {10, 512}, {}, 0x300000);
  const auto none = ops::absent();
  t.errors = {
      {"an out of another dtype",
       {x, none, w, pos, none, fake(DType::f32, {10, 512}, {}, 0x300000)},
       {},
       "reduce_fused: argument 'out' has dtype f32 and x bf16; requires x's "
       "dtype, or e4m3 (fp8_format 'e4m3')"},
      {"sf with a bf16 out",
       {x, none, w, pos, fake(DType::f32, {1}, {}, 0x400000), out},
       {},
       "reduce_fused: argument 'sf' is passed with an out of bf16; requires "
       "an e4m3 out (sf scales the fp8 output only)"},
      {"a hidden size not a multiple of 256",
       {fake(DType::bf16, {40, 640}), none, w, pos, none,
        fake(DType::bf16, {10, 640}, {}, 0x300000)},
       {},
       "reduce_fused: argument 'x' has shape [40, 640] (H = 640); requires H "
       ">= 256 "
       "and H a multiple of 256"},
      {"more than 32 slots",
       {x, none, fake(DType::f32, {10, 33}, {}, 0x100000),
        fake(DType::i32, {10, 33}, {}, 0x200000), none, out},
       {},
       "reduce_fused: argument 'topk_weights' has shape [10, 33] (K = 33); "
       "requires 1 <= K <= 32"},
      {"weights of another shape",
       {x, none, fake(DType::f32, {10, 5}, {}, 0x100000), pos, none, out},
       {},
       "reduce_fused: argument 'token_topk_to_pos' has shape [10, 6]; requires "
       "[T, K] = [10, 5]"},
      {"x_sf of another length",
       {x, fake(DType::f32, {39}, {}, 0x400000), w, pos, none, out},
       {},
       "reduce_fused: argument 'x_sf' has shape [39]; requires [N] = [40]"},
  };
  return t;
}

} // namespace tilejit::harness
