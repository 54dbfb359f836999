// mhc_head_compute_mix.dsl.cpp - mhc_head_compute_mix_fwd in the tile DSL:
// sigmoid(fma(in, scale, base[j])) + eps over (tokens, streams) tiles, the
// base as rows of stride 0.
#include "mhc/mhc_mixes.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::mhc {

Kernel mhc_head_compute_mix_fwd_kernel(const MhcMixSpec &s) {
  dsl::KernelBuilder k("mhc_head_compute_mix_fwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto in = k.tensor("input_mix", f32, 2, access);       // (N, mhc)
  auto scale = k.tensor("mhc_scale", f32, 1);            // (1,)
  auto base = k.tensor("mhc_base_rows", f32, 2, access); // (N, mhc), stride 0
  auto out = k.tensor("output_mix", f32, 2, access);     // (N, mhc)
  auto eps = k.scalar("mhc_pre_eps", f32);
  const int64_t bt = s.block_t;
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint32_t>(s.mhc)));
  k.grid({k.blocks(in, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  auto z =
      k.fma(k.load(in, {t0, zero}, {bt, width}), k.load_scalar(scale, {zero}),
            k.load(base, {t0, zero}, {bt, width}));
  k.store(k.sigmoid(z) + eps, out, {t0, zero});
  return k.build();
}

} // namespace tilejit::mhc

namespace tilejit::mhc {

Kernel mhc_head_compute_mix_bwd_kernel(const MhcMixSpec &s) {
  dsl::KernelBuilder k("mhc_head_compute_mix_bwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto grad = k.tensor("output_mix_grad", f32, 2, access); // (N, mhc)
  auto in = k.tensor("input_mix", f32, 2, access);
  auto scale = k.tensor("mhc_scale", f32, 1);
  auto base = k.tensor("mhc_base_rows", f32, 2, access); // stride-0 rows
  auto in_grad = k.tensor("input_mix_grad", f32, 2, access);
  auto scale_part = k.tensor("mhc_scale_grad_partial", f32, 2); // (P, 1)
  auto base_part = k.tensor("mhc_base_grad_partial", f32, 2);   // (P, mhc)
  const int64_t bt = s.block_t;
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint32_t>(s.mhc)));
  k.grid({k.blocks(scale_part, 0)});
  auto block = k.block_id(0), zero = k.index(0);
  auto blocks = k.dim(scale_part, 0);
  auto tiles = (k.dim(in, 0) + k.index(bt - 1)) / k.index(bt);
  auto steps = (tiles + blocks - k.index(1)) / blocks;
  auto sc = k.load_scalar(scale, {zero});
  auto one = k.constant(1, f32);
  const std::vector<int64_t> box = {bt, width};
  // Carried: per-thread partials of gz * in (the scale's) and gz (the
  // base's); tiles past the end read zeros and add nothing.
  auto sums = k.serial(
      zero, steps, {k.full(box, 0, f32), k.full(box, 0, f32)},
      [&](dsl::Value step, std::vector<dsl::Value> acc) {
        auto t0 = (step * blocks + block) * k.index(bt);
        auto x = k.load(in, {t0, zero}, box);
        auto s_ = k.sigmoid(k.fma(x, sc, k.load(base, {t0, zero}, box)));
        auto gz = s_ * (one - s_) * k.load(grad, {t0, zero}, box);
        k.store(gz * sc, in_grad, {t0, zero});
        return std::vector{k.fma(gz, x, acc[0]), acc[1] + gz};
      });
  k.store(k.reduce_sum(k.reduce_sum(sums[0], 0), 1), scale_part, {block, zero});
  k.store(k.reduce_sum(sums[1], 0), base_part, {block, zero});
  return k.build();
}

} // namespace tilejit::mhc
