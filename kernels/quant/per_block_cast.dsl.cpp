// per_block_cast.dsl.cpp - per_block_cast in the tile DSL: a block loads a
// bm x block_k tile (one row of scaling blocks), takes each scaling block's
// absmax over its rows and columns, and stores the quantized tile and the
// row of scales; or only the scales, or the tile quantized with given ones.
#include "quant/per_block_cast.h"
#include "quant/scale_dsl.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel per_block_cast_kernel(const PerBlockCastSpec &s) {
  using Mode = PerBlockCastSpec::Mode;
  dsl::KernelBuilder k("per_block_cast", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const bool packed = s.sf_layout == SfLayout::packed_ue8m0;
  const int64_t bm = s.bm, bk = s.block_k, n = bk / s.bk;
  auto x = k.tensor("x", s.in_dtype, 2, access);
  k.grid({k.blocks(x, 0, bm), k.blocks(x, 1, bk)});
  auto row = k.block_id(0), m0 = row * k.index(bm);
  auto k0 = k.block_id(1) * k.index(bk);
  auto first = k.block_id(1) * k.index(n); // the tile's first scale
  auto tile = k.cast(k.load(x, {m0, k0}, {bm, bk}), DType::f32);
  auto blocks = k.reshape(tile, {bm, n, s.bk});

  Scales sc;
  if (s.mode == Mode::precomputed_sf) {
    sc.sf_inv = precomputed_sf_inv(k, k.tensor("sf", DType::f32, 3), row, first,
                                   1, n, s.threads);
  } else {
    auto absmax = k.reduce_max(k.reduce_absmax(blocks, 2), 0); // (1, n, 1)
    sc = scales_of(k, absmax, s.e2m1 ? kE2m1Limits : kE4m3Limits, s.round_sf);
  }
  if (s.mode != Mode::sf_only) {
    auto out = k.tensor("out", s.e2m1 ? DType::u8 : DType::e4m3, 2, access);
    auto scaled = k.reshape(blocks * sc.sf_inv, {bm, bk});
    if (s.e2m1)
      k.store(k.pack_nibbles(k.to_e2m1(scaled, s.e2m1_least
                                                   ? dsl::E2m1Encode::least
                                                   : dsl::E2m1Encode::select)),
              out, {m0, k0 / k.index(2)});
    else
      k.store(k.cast(scaled, DType::e4m3), out, {m0, k0});
  }
  if (s.mode == Mode::precomputed_sf)
    return k.build();

  // Packed scales are bytes (m, k / 4, k % 4) of the int32 tensor.
  auto out_sf =
      k.tensor("out_sf", packed ? DType::u8 : DType::f32, packed ? 3 : 2);
  if (!packed) {
    k.store(k.reshape(sc.sf, {1, n}), out_sf, {row, first});
    return k.build();
  }
  // Scale j of a row is byte j % 4 of word j / 4; fewer than 4 scales a
  // tile fill part of a word (n divides 4).
  auto bytes = k.cast(sc.biased, DType::u8);
  auto word = first / k.index(4), zero = k.index(0);
  if (n >= 4)
    k.store(k.reshape(bytes, {1, n / 4, 4}), out_sf, {row, word, zero});
  else
    k.store(k.reshape(bytes, {1, 1, n}), out_sf,
            {row, word, first - word * k.index(4)});
  return k.build();
}

} // namespace tilejit::quant
