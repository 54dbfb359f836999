// mhc_multilayer_recompute.dsl.cpp - mhc_multilayer_recompute in the tile
// DSL: a block a token and a chunk of its columns keeps the residual's
// streams R in registers (f32) through the layers: layer l's input is
// mhc_pre_apply_mix's chain of pre_mix_l over R, its next residual
// mhc_post's chain of post_mix_l, layer_output_l and comb_mix_l over R
// (mhc_dsl.h), stored in bf16 and read back as the next R.
#include "mhc/mhc_multilayer_recompute.h"
#include "mhc/mhc_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace tilejit::mhc {

Kernel mhc_multilayer_recompute_kernel(const MhcRecomputeSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("mhc_multilayer_recompute", s.threads);
  k.programmatic_launch();
  const auto bf16 = DType::bf16, f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int mhc = s.mhc;
  auto tensor = [&](const char *list, int l, DType dtype, bool rows) {
    return k.tensor(fmt::format("{}_{}", list, l), dtype, rows ? 2 : 3,
                    dtype == bf16 ? access : dsl::Access{});
  };
  // (N, mhc, H) residuals; (N, H) rows; the mixes (N, mhc) and (N, mhc^2).
  auto initial = k.tensor("initial_residual", bf16, 3, access);
  std::vector<dsl::Tensor> pre, input, output, post, comb, residual;
  for (int l = 0; l < s.layers; ++l) {
    pre.push_back(tensor("pre_mix", l, f32, true));
    input.push_back(tensor("layer_input", l, bf16, true));
  }
  for (int l = 0; l < s.posts; ++l) {
    output.push_back(tensor("layer_output", l, bf16, true));
    post.push_back(tensor("post_mix", l, f32, true));
    comb.push_back(tensor("comb_mix", l, f32, true));
    residual.push_back(tensor("residual", l, bf16, false));
  }
  k.grid({k.blocks(initial, 0), k.blocks(initial, 2, s.chunk)});
  auto t = k.block_id(0), h0 = k.block_id(1) * k.index(s.chunk);
  auto zero = k.index(0);
  const std::vector<int64_t> box = {1, 1, s.chunk}, row = {1, s.chunk};
  std::vector<Value> r;
  for (int m = 0; m < mhc; ++m)
    r.push_back(
        k.reshape(k.cast(k.load(initial, {t, k.index(m), h0}, box), f32), row));
  auto layer_input = [&](int l) {
    std::vector<Value> mix;
    for (int m = 0; m < mhc; ++m)
      mix.push_back(k.load_scalar(pre[l], {t, k.index(m)}));
    k.store(k.cast(mix_streams(k, mix, r), bf16), input[l], {t, h0});
  };
  for (int l = 0; l < s.posts; ++l) {
    layer_input(l);
    auto y = k.cast(k.load(output[l], {t, h0}, row), f32);
    std::vector<Value> next;
    for (int o = 0; o < mhc; ++o) {
      std::vector<Value> comb_o;
      for (int i = 0; i < mhc; ++i)
        comb_o.push_back(k.load_scalar(comb[l], {t, k.index(i * mhc + o)}));
      auto rounded = k.cast(
          post_stream(k, k.load_scalar(post[l], {t, k.index(o)}), y, comb_o, r),
          bf16);
      k.store(k.reshape(rounded, box), residual[l], {t, k.index(o), h0});
      next.push_back(k.cast(rounded, f32));
    }
    r = next;
  }
  if (s.layers > s.posts)
    layer_input(s.layers - 1);
  return k.build();
}

} // namespace tilejit::mhc
