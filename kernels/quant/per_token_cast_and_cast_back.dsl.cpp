// per_token_cast_and_cast_back.dsl.cpp - "fake quantization" in the tile
// DSL: a block loads a tile of rows, takes each group's absmax, turns it
// into a scale (§3.2, or an e4m3 scale), quantizes and dequantizes in
// registers and stores the tile in x's dtype.
#include "quant/per_token_cast_and_cast_back.h"
#include "quant/scale_dsl.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel per_token_cast_and_cast_back_kernel(const CastAndCastBackSpec &s) {
  dsl::KernelBuilder k("per_token_cast_and_cast_back", s.threads);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", s.dtype, 2, access);
  auto out = k.tensor("out", s.dtype, 2, access);
  const int64_t bm = s.block_m, bk = s.block_k, g = s.group, n = bk / g;
  k.grid({k.blocks(x, 0, bm), k.blocks(x, 1, bk)});
  auto r0 = k.block_id(0) * k.index(bm), c0 = k.block_id(1) * k.index(bk);
  // block_k divides K: only rows can run past x.
  auto groups =
      k.reshape(k.cast(k.load(x, {r0, c0}, {bm, bk}), DType::f32), {bm, n, g});
  const FmtLimits limits = s.e2m1 ? kE2m1Limits : kE4m3Limits;
  auto absmax = k.reduce_absmax(groups, 2);
  const Scales sc = s.e4m3_sf
                        ? e4m3_scales_of(k, absmax, e4m3_sf_limits(limits))
                        : scales_of(k, absmax, limits, s.round_sf);
  const dsl::Value sf = sc.sf, sf_inv = sc.sf_inv;
  auto scaled = groups * sf_inv;
  auto q = s.e2m1 ? k.from_e2m1(k.to_e2m1(scaled))
                  : k.cast(k.cast(scaled, DType::e4m3), DType::f32);
  k.store(k.cast(k.reshape(q * sf, {bm, bk}), s.dtype), out, {r0, c0});
  return k.build();
}

} // namespace tilejit::quant
