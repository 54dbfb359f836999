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
