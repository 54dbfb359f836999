// mhc_pre_big_fuse.dsl.cpp - mhc_pre_big_fuse_fwd in the tile DSL, in two
// kernels. The mix kernel: block_t tokens' mixes = fma(sum of the splits'
// products, rsqrt(sum of their squares / group + eps), 0) with both sums in
// split order (mhc_reduce_partials_and_rmsnorm_fwd's with one group), then
// through shared memory the three parts as mhc_pre_split_mixes_fwd takes
// them (pre to the scratch, post to post_mix), the comb part's Sinkhorn on
// the (block_t, mhc, mhc) tiles of sinkhorn_normalize, in its layout. The apply
// kernel: mhc_pre_apply_mix_fwd's chunks, reading the pre mix from the scratch.
// Every step is the separate kernels' own code (mhc_dsl.h) on their tiles,
// so that the result is theirs bit for bit.
#include "mhc/mhc_pre_big_fuse.h"
#include "mhc/mhc_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <bit>

namespace tilejit::mhc {

Kernel mhc_pre_big_fuse_mix_kernel(const MhcBigFuseSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("mhc_pre_big_fuse_fwd_mix", 128);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  auto mul = k.tensor("gemm_out_mul", f32, 3);   // (S, T, M3)
  auto sq = k.tensor("sqrsum_rows", f32, 3);     // (S, T, M3'), M3' stride 0
  auto scale = k.tensor("mhc_scale", f32, 1);    // (3,)
  auto base = k.tensor("mhc_base_rows", f32, 2); // (T, M3), T stride 0
  auto post = k.tensor("post_mix", f32, 2);      // (T, mhc)
  auto comb = k.tensor("comb_mix_rows", f32, 3); // (T, mhc, mhc)
  auto pre = k.tensor("scratch", f32, 3);        // (T, mhc, 1)
  auto group_size = k.scalar("rms_group_size", f32);
  auto rms_eps = k.scalar("rms_eps", f32);
  auto post_mult = k.scalar("mhc_post_mult_value", f32);
  auto pre_eps = k.scalar("mhc_pre_eps", f32);
  const int64_t bt = s.block_t, mhc = s.mhc, pairs = mhc * mhc;
  const auto n3 = static_cast<int64_t>(
      std::bit_ceil(static_cast<uint32_t>(mhc * (mhc + 2))));
  k.grid({k.blocks(post, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);

  // The partials summed in split order, from 0.
  auto tile = [&](const dsl::Tensor &t, Value split) {
    return k.reshape(k.load(t, {split, t0, zero}, {1, bt, n3}), {bt, n3});
  };
  auto sums = k.serial(
      zero, k.dim(mul, 0), {k.full({bt, n3}, 0, f32), k.full({bt, n3}, 0, f32)},
      [&](Value i, std::vector<Value> a) {
        return std::vector<Value>{a[0] + tile(mul, i), a[1] + tile(sq, i)};
      });
  auto r = k.rsqrt(sums[1] / group_size + rms_eps);
  auto mixes = k.fma(sums[0], r, k.full({bt, n3}, 0, f32));
  auto shared = k.alloc_shared(f32, {bt, n3});
  k.store(mixes, shared, {zero, zero});
  k.barrier();
  // The part of the mixes from column `first`, `width` wide: z =
  // fma(mixes, scale[which], base).
  auto part = [&](int64_t first, int64_t width, int which) {
    auto at = k.index(first);
    return k.fma(k.load(shared, {zero, at}, {bt, width}),
                 k.load_scalar(scale, {k.index(which)}),
                 k.load(base, {t0, at}, {bt, width}));
  };
  k.store(k.reshape(k.sigmoid(part(0, mhc, 0)) + pre_eps, {bt, mhc, 1}), pre,
          {t0, zero, zero});
  k.store(k.sigmoid(part(mhc, mhc, 1)) * post_mult, post, {t0, zero});
  // The comb logits in the layout sinkhorn_normalize loads its matrices
  // in (rows of up to 16 bytes a thread), so that its sums add in the
  // same order.
  auto logits = k.relayout(k.reshape(part(2 * mhc, pairs, 2), {bt, mhc, mhc}),
                           static_cast<int>(std::min<int64_t>(mhc, 4)));
  auto eps = k.constant(std::bit_cast<float>(s.eps_bits), f32);
  auto y = sinkhorn_forward(k, logits, eps, s.repeat);
  k.store(y, comb, {t0, zero, zero});
  return k.build();
}

Kernel mhc_pre_big_fuse_apply_kernel(const MhcBigFuseSpec &s) {
  // The residual (T, mhc, H), the pre mix (T, mhc, 1), the layer input's
  // rows (T, 1, H).
  return apply_mix_kernel("mhc_pre_big_fuse_fwd_apply", "residual", "scratch",
                          "layer_input_rows", s.mhc, s.chunk, s.apply_threads,
                          s.vector_bytes);
}

} // namespace tilejit::mhc
