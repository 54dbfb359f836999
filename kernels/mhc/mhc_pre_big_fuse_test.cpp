// mhc_pre_big_fuse_test.cpp - mhc_pre_big_fuse_fwd's case table:
// TileKernels' test shapes (512 to 8192 tokens, H 1280 to 4096, mhc 4, 16
// splits), a token block's tail, few and no tokens, 2 and 8 streams, one
// split, other eps, post_mult and repeats, the benchmark shapes, mistakes.
// The reference is the chain of the separate references (exact split sums
// and IEEE math, but rsqrt and CUDA's expf where the kernels take rsqrtf
// and their own exp): post and comb within f32 tolerance, the layer input
// within a bf16 rounding. (The GPU pytest checks the spec's contract: the
// same bits as the chain of tilejit's own kernels.)
#include "op_test.h"

namespace tilejit::harness {

namespace {

/// --shape S x T x mhc x H.
Case fuse(int64_t s, int64_t t, int64_t mhc, int64_t h,
          std::map<std::string, std::string> set = {}, int kind = Case::gpu) {
  set["n_splits"] = std::to_string(s);
  return {.label = "", .shape = {s, t, mhc, h}, .set = set, .kind = kind};
}

} // namespace

TILEJIT_OP_TEST(mhc_pre_big_fuse_fwd) {
  OpTest t{.op = "mhc_pre_big_fuse_fwd",
           // Sums of squares of mhc H ~ 4 x 4096 unit normals over 16
           // splits, and products of the size that puts the mixes around 1.
           .fills = {{"gemm_out_sqrsum", uniform(500, 1500)},
                     {"gemm_out_mul", normal(0, 0.25)},
                     {"mhc_scale", normal(0, 0.1)},
                     {"mhc_base", normal(0, 0.1)}},
           .compare = {{"post_mix", allclose(1e-5, 1e-6)},
                       {"comb_mix", allclose(2e-5, 1e-5)},
                       {"layer_input", allclose(8e-3, 1e-5)}},
           .poison_outputs = true};
  for (int64_t tokens : {512, 1024, 2048, 8192})
    for (int64_t h : {1280, 2560, 4096})
      t.cases.push_back(fuse(16, tokens, 4, h));
  t.cases.push_back(fuse(16, 1000, 4, 4096)); // a block of 64 partial
  t.cases.push_back(fuse(16, 5, 4, 7168));
  t.cases.push_back(fuse(16, 1, 4, 64));
  t.cases.push_back(fuse(16, 0, 4, 4096));
  t.cases.push_back(fuse(16, 300, 2, 2048));
  t.cases.push_back(fuse(8, 300, 8, 1024));
  t.cases.push_back(fuse(1, 700, 4, 4096));
  t.cases.push_back(fuse(16, 700, 4, 1000,
                         {{"mhc_post_mult_value", "2.5"},
                          {"sinkhorn_repeat", "1"},
                          {"mhc_pre_eps", "0.01"},
                          {"mhc_sinkhorn_eps", "1e-4"},
                          {"rms_eps", "1e-3"}}));
  for (int64_t h : {4096, 7168})
    t.cases.push_back(fuse(16, 8192, 4, h, {}, Case::bench));

  const auto mul = fake(DType::f32, {16, 8, 24}),
             sq = fake(DType::f32, {16, 8}, {}, 0x100000),
             scale = fake(DType::f32, {3}, {}, 0x200000),
             base = fake(DType::f32, {24}, {}, 0x300000),
             residual = fake(DType::bf16, {8, 4, 1024}, {}, 0x400000),
             post = fake(DType::f32, {8, 4}, {}, 0x500000),
             comb = fake(DType::f32, {8, 16}, {}, 0x600000),
             layer_input = fake(DType::bf16, {8, 1024}, {}, 0x700000);
  t.errors = {
      {"n_splits not the partials'",
       {mul, sq, scale, base, residual, post, comb, layer_input},
       {{"n_splits", int64_t{4}}},
       "mhc_pre_big_fuse_fwd: argument 'n_splits' is 4; requires the splits "
       "of 'gemm_out_mul' (16)"},
      {"3 streams",
       {fake(DType::f32, {16, 8, 15}), sq, scale,
        fake(DType::f32, {15}, {}, 0x300000),
        fake(DType::bf16, {8, 3, 1024}, {}, 0x400000),
        fake(DType::f32, {8, 3}, {}, 0x500000),
        fake(DType::f32, {8, 9}, {}, 0x600000), layer_input},
       {},
       "mhc_pre_big_fuse_fwd: argument 'residual' has 3 streams; requires a "
       "power of two (the comb mix's Sinkhorn)"},
      {"sqrsum of other tokens",
       {mul, fake(DType::f32, {16, 9}, {}, 0x100000), scale, base, residual,
        post, comb, layer_input},
       {},
       "mhc_pre_big_fuse_fwd: argument 'gemm_out_sqrsum' has shape [16, 9]; "
       "requires [S, T] = [16, 8]"}};
  return t;
}

} // namespace tilejit::harness
