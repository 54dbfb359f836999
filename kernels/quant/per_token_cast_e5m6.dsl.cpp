// per_token_cast_e5m6.dsl.cpp - per_token_cast with fmt e5m6 in the tile
// DSL (§5): a block loads block_m whole rows, takes each row's absmax,
// turns it into the row's scale (§3.2 with 65024), and stores the rows'
// E5M6 codes packed 8 to 3 words, and the scales.
#include "quant/per_token_cast.h"
#include "quant/scale_dsl.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel per_token_cast_e5m6_kernel(const PerTokenCastSpec &s) {
  dsl::KernelBuilder k("per_token_cast_e5m6", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const bool packed = s.sf_layout == SfLayout::packed_ue8m0;
  const int64_t bm = s.block_m, bk = s.block_k;
  auto x = k.tensor("x", s.in_dtype, 2, access);
  // out as its u32 words, (M, 3K / 8); packed scales as the bytes (M, 1, 4)
  // of the int32 (M, 1), of which byte 0 holds the row's.
  auto words = k.tensor("out_words", DType::u32, 2, access);
  auto out_sf =
      k.tensor("out_sf", packed ? DType::u8 : DType::f32, packed ? 3 : 2);
  k.grid({k.blocks(x, 0, bm)});
  auto m0 = k.block_id(0) * k.index(bm), zero = k.index(0);
  // Each thread holds 8 consecutive elements (relayout; the 3 words of
  // their codes, 3 x 128 a row of 1024, would narrow every access of the
  // kernel to single elements), so that a group's codes pack in registers.
  // A row as (parts, 1024): reduced over the parts in registers, then over
  // the 1024 across threads.
  const int64_t parts = bk / 1024;
  auto tile = k.reshape(
      k.cast(k.relayout(k.load(x, {m0, zero}, {bm, bk}), 8), DType::f32),
      {bm, parts, 1024});
  auto sc = scales_of(k, k.reduce_max(k.reduce_absmax(tile, 1), 2), kE5m6Limits,
                      s.round_sf); // (bm, 1, 1)
  auto codes = k.relayout(k.to_e5m6(k.reshape(tile * sc.sf_inv, {bm, bk})), 8);
  k.store(k.pack_e5m6(codes), words, {m0, zero});
  if (packed)
    k.store(k.cast(sc.biased, DType::u8), out_sf, {m0, zero, zero});
  else
    k.store(k.reshape(sc.sf, {bm, 1}), out_sf, {m0, zero});
  return k.build();
}

} // namespace tilejit::quant
