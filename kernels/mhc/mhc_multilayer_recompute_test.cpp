// mhc_multilayer_recompute_test.cpp - the case table: TileKernels' (L, P, H)
// at 8192 tokens of 4 streams (1 to 10 layers, the last with or without its
// post step; H >= 4096 among the big cases), 2 and 8 streams, a 2-D-led shape,
// H not a power of two, few and no tokens, the 8192-token GPU cases again at
// 129 tokens (for the sanitizers), the benchmark shapes, mistakes.
// Bitwise: the layer inputs and residuals are the same fma chains as the CPU
// reference's.
#include "op_test.h"

#include <fmt/format.h>

namespace tilejit::harness {

namespace {

/// L layers, P of them with a post step, over `shape` (*, mhc, H).
Case stack(std::vector<int64_t> shape, int layers, int posts,
           int kind = Case::gpu) {
  Case c{.label = fmt::format("L={} P={}", layers, posts),
         .shape = std::move(shape),
         .kind = kind};
  auto passed = [](bool b) { return b ? "passed" : "none"; };
  for (int l = 0; l < 10; ++l) {
    for (const char *list : {"pre_mix", "layer_input"})
      c.set[fmt::format("{}_{}", list, l)] = passed(l < layers);
    for (const char *list :
         {"layer_output", "post_mix", "comb_mix", "residual"})
      c.set[fmt::format("{}_{}", list, l)] = passed(l < posts);
  }
  return c;
}

} // namespace

TILEJIT_OP_TEST(mhc_multilayer_recompute) {
  OpTest t{.op = "mhc_multilayer_recompute", .poison_outputs = true};
  for (auto [layers, posts, h] : {std::tuple{1, 1, 2560},
                                  {3, 2, 2560},
                                  {3, 3, 2560},
                                  {10, 9, 2560},
                                  {10, 10, 2560},
                                  {10, 9, 4096},
                                  {10, 10, 4096},
                                  {10, 9, 7168},
                                  {10, 10, 7168},
                                  {10, 9, 8192},
                                  {10, 10, 8192}}) {
    // Ten layers of 8192 x 4 x H >= 4096 (gigabytes a case, minutes of
    // CPU reference on the GPU machine: the op's GPU cases outlasted a
    // device call twice) run with TileKernels' grids ([big]).
    t.cases.push_back(
        stack({8192, 4, h}, layers, posts, h >= 4096 ? Case::big : Case::gpu));
    // The same kernels at 129 tokens (T is in no spec field), so that a
    // sanitizer run, one case a distinct set of kernels, its smallest
    // (TILEJIT_TEST_DISTINCT_KERNELS), gets through them in a device call.
    if (h < 4096)
      t.cases.push_back(stack({129, 4, h}, layers, posts));
  }
  t.cases.push_back(stack({300, 2, 1024}, 4, 3));
  t.cases.push_back(stack({100, 8, 512}, 2, 2));
  t.cases.push_back(stack({2, 77, 4, 1000}, 5, 4));
  t.cases.push_back(stack({3, 4, 16}, 1, 0));
  t.cases.push_back(stack({0, 4, 1024}, 2, 1));
  for (int64_t h : {2560, 4096, 7168, 8192})
    for (int posts : {9, 10})
      t.cases.push_back(stack({8192, 4, h}, 10, posts, Case::bench));

  // Mistakes: layer 1's pre mix without layer 0's, outputs for fewer layers
  // than pre mixes, and a post step missing its comb mix.
  const auto none = ops::absent();
  auto call = [&](int layers, int posts, int combs, int inputs) {
    std::vector<rt::TensorView> v = {fake(DType::bf16, {8, 4, 64})};
    CUdeviceptr at = 0x100000;
    auto add = [&](int count, DType dtype, std::vector<int64_t> shape) {
      for (int l = 0; l < 10; ++l)
        v.push_back(l < count ? fake(dtype, shape, {}, at += 0x10000) : none);
    };
    add(layers, DType::f32, {8, 4, 1});
    add(posts, DType::bf16, {8, 64});
    add(posts, DType::f32, {8, 4, 1});
    add(combs, DType::f32, {8, 4, 4});
    add(inputs, DType::bf16, {8, 64});
    add(posts, DType::bf16, {8, 4, 64});
    return v;
  };
  std::vector<rt::TensorView> gap = call(3, 2, 2, 3);
  gap[1] = none; // pre_mix_0
  t.errors = {
      {"a gap in the pre mixes",
       gap,
       {},
       "mhc_multilayer_recompute: argument 'pre_mix_1' is passed while "
       "'pre_mix_0' is None; requires a list's tensors from 0 on"},
      {"two posts short",
       call(3, 1, 1, 3),
       {},
       "mhc_multilayer_recompute: 1 layer outputs for 3 layers; requires L "
       "- 1 or L (L = 3, the pre mixes passed)"},
      {"a comb mix short",
       call(3, 3, 2, 3),
       {},
       "mhc_multilayer_recompute: 2 tensors comb_mix_0.. passed; requires 3 "
       "(the layer outputs passed)"},
      {"a layer input short",
       call(3, 2, 2, 2),
       {},
       "mhc_multilayer_recompute: 2 tensors layer_input_0.. passed; requires "
       "3 (the pre mixes passed)"}};
  return t;
}

} // namespace tilejit::harness
