// mhc_pre_split_mixes.dsl.cpp - mhc_pre_split_mixes_fwd in the tile DSL:
// each token's mhc * (mhc + 2) mixes as three tiles (the pre part, the
// post part, the comb part) of z = fma(in, scale[part], base[j]): pre =
// sigmoid(z) + eps, post = sigmoid(z) * post_mult, comb = z. The base as
// rows of stride 0.
#include "mhc/mhc_mixes.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::mhc {

Kernel mhc_pre_split_mixes_fwd_kernel(const MhcMixSpec &s) {
  dsl::KernelBuilder k("mhc_pre_split_mixes_fwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto in = k.tensor("input_mixes", f32, 2, access);     // (N, mhc3)
  auto scale = k.tensor("mhc_scale", f32, 1);            // (3,)
  auto base = k.tensor("mhc_base_rows", f32, 2, access); // (N, mhc3)
  auto pre = k.tensor("pre_layer_mix", f32, 2, access);  // (N, mhc)
  auto post = k.tensor("post_layer_mix", f32, 2, access);
  auto comb = k.tensor("comb_res_mix", f32, 2, access); // (N, mhc^2)
  auto post_mult = k.scalar("mhc_post_mult_value", f32);
  auto eps = k.scalar("mhc_pre_eps", f32);
  const int64_t bt = s.block_t, mhc = s.mhc;
  const auto streams =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint32_t>(mhc)));
  const auto pairs =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint32_t>(mhc * mhc)));
  k.grid({k.blocks(in, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  // z of the part starting at column `first`, `width` wide (columns past
  // the part are the next part's or zeros: not stored).
  auto part = [&](int64_t first, int64_t width, int which) {
    auto at = k.index(first);
    return k.fma(k.load(in, {t0, at}, {bt, width}),
                 k.load_scalar(scale, {k.index(which)}),
                 k.load(base, {t0, at}, {bt, width}));
  };
  k.store(k.sigmoid(part(0, streams, 0)) + eps, pre, {t0, zero});
  k.store(k.sigmoid(part(mhc, streams, 1)) * post_mult, post, {t0, zero});
  k.store(part(2 * mhc, pairs, 2), comb, {t0, zero});
  return k.build();
}

} // namespace tilejit::mhc
