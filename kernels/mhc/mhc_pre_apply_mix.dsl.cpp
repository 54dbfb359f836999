// mhc_pre_apply_mix.dsl.cpp - mhc_pre_apply_mix_fwd in the tile DSL: a
// block a token and a chunk of its columns; the layer input is the fma
// chain over the streams from 0 (mix[m] a scalar every thread reads),
// rounded once to bf16.
#include "mhc/mhc_stream.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::mhc {

Kernel mhc_pre_apply_mix_fwd_kernel(const MhcStreamSpec &s) {
  dsl::KernelBuilder k("mhc_pre_apply_mix_fwd", s.threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", DType::bf16, 3, access); // (N, mhc, H)
  auto mix = k.tensor("mix", DType::f32, 3);      // (N, mhc, 1)
  auto o = k.tensor("o", DType::bf16, 3, access); // (N, 1, H)
  k.grid({k.blocks(o, 0), k.blocks(o, 2, s.chunk)});
  auto t = k.block_id(0), h0 = k.block_id(1) * k.index(s.chunk);
  auto zero = k.index(0);
  dsl::Value acc = k.full({1, 1, s.chunk}, 0, DType::f32);
  for (int m = 0; m < s.mhc; ++m) {
    auto stream =
        k.cast(k.load(x, {t, k.index(m), h0}, {1, 1, s.chunk}), DType::f32);
    acc = k.fma(k.load_scalar(mix, {t, k.index(m), zero}), stream, acc);
  }
  k.store(k.cast(acc, DType::bf16), o, {t, zero, h0});
  return k.build();
}

} // namespace tilejit::mhc
