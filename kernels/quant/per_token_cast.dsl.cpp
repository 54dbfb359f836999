// per_token_cast.dsl.cpp - per_token_cast in the tile DSL: a block loads a
// block_m x block_k tile, takes the absmax of each group of channels, turns
// it into a scale (§3.2) and stores the e4m3 tile and the scales.
#include "quant/per_token_cast.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel per_token_cast_kernel(const PerTokenCastSpec &s) {
  dsl::KernelBuilder k("per_token_cast", s.threads);
  dsl::Access access =
      s.vector_bytes ? dsl::inner_contiguous(s.vector_bytes) : dsl::Access{};
  const bool packed = s.sf_layout == SfLayout::packed_ue8m0;
  auto x = k.tensor("x", s.in_dtype, 2, access);
  auto out = k.tensor("out", DType::e4m3, 2, access);
  // Packed scales are bytes (m, k / 4, k % 4) of the int32 tensor.
  auto out_sf =
      k.tensor("out_sf", packed ? DType::u8 : DType::f32, packed ? 3 : 2);

  const int64_t bm = s.block_m, bk = s.block_k, g = s.group, n = bk / g;
  auto m0 = k.block_id(0) * k.index(bm);
  auto k0 = k.block_id(1) * k.index(bk);
  // A tile that is one whole row (see per_token_cast_tiling) is inside x
  // and out: no bounds checks.
  const dsl::Bounds bounds =
      s.inside ? dsl::Bounds::promised_inside : dsl::Bounds::checked;
  auto tile = k.cast(k.load(x, {m0, k0}, {bm, bk}, bounds), DType::f32);
  // A group that is not a power of two is parts x p: reduced over parts
  // (in registers), then over p (across threads).
  const int64_t p = g & -g, parts = g / p;
  auto groups = parts == 1 ? k.reshape(tile, {bm, n, g})
                           : k.reshape(tile, {bm, n, parts, p});
  auto absmax = parts == 1 ? k.reduce_absmax(groups, 2)
                           : k.reduce_max(k.reduce_absmax(groups, 2), 3);
  auto amax = k.max(absmax, k.constant(1e-4, DType::f32));
  auto sf = amax / k.constant(448, DType::f32);
  auto sf_inv = k.constant(448, DType::f32) / amax; // a second IEEE division
  dsl::Value biased; // the power of two above sf, as a biased exponent
  if (s.round_sf) {
    auto one = k.constant(1, DType::u32);
    biased =
        (((k.bitcast(sf, DType::u32) - one) >> k.constant(23, DType::u32)) +
         one);
    auto exponent = k.constant(23, DType::u32);
    sf = k.bitcast(biased << exponent, DType::f32);
    sf_inv = k.bitcast((k.constant(254, DType::u32) - biased) << exponent,
                       DType::f32);
  }
  auto q = k.cast(groups * sf_inv, DType::e4m3);
  k.store(k.reshape(q, {bm, bk}), out, {m0, k0}, bounds);

  if (!packed) {
    k.store(k.reshape(sf, {bm, n}), out_sf, {m0, k.block_id(1) * k.index(n)});
  } else {
    // Scale g of a row is byte g % 4 of word g / 4; fewer than 4 scales a
    // block fill part of a word (n divides 4).
    auto bytes = k.cast(biased, DType::u8);
    auto first = k.block_id(1) * k.index(n); // this block's first scale
    if (n >= 4)
      k.store(k.reshape(bytes, {bm, n / 4, 4}), out_sf,
              {m0, first / k.index(4), k.index(0)});
    else
      k.store(
          k.reshape(bytes, {bm, 1, n}), out_sf,
          {m0, first / k.index(4), first - (first / k.index(4)) * k.index(4)});
  }
  return k.build();
}

} // namespace tilejit::quant
