// per_token_cast_back.dsl.cpp - per_token_cast_back (and cast_back) in the
// tile DSL: a block loads a block_m x block_k tile of e4m3 or packed e2m1
// data and the scales of its groups (one a row where a group spans the tile;
// a row of scales shared by bm rows in the block case), multiplies in f32
// (the tile seen as (rows, groups, channels), the scales broadcast along the
// channels) and stores bf16 or f32.
#include "quant/per_token_cast_back.h"
#include "quant/dequant_dsl.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel per_token_cast_back_kernel(const CastBackSpec &s) {
  dsl::KernelBuilder k("per_token_cast_back", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  // The data: e4m3, packed e2m1 bytes, or E5M6 as its u32 words.
  auto x =
      s.e5m6 ? k.tensor("x_words", DType::u32, 2, access)
             : k.tensor("x_data", s.e2m1 ? DType::u8 : DType::e4m3, 2, access);
  // The scales as (M', bm, nK) (see cast_back_views); packed ones as bytes
  // (M', bm, w, j) of the int32 tensor: group 4w + j.
  auto sf =
      k.tensor("x_sf", s.packed ? DType::u8 : DType::f32, s.packed ? 4 : 3);
  auto out = k.tensor("out", s.out_dtype, 2, access);
  const int64_t bm = s.block_m, bk = s.block_k;
  // Consecutive blocks take consecutive column tiles of the same rows, so
  // that the rows' bytes are read and written together.
  k.grid({k.blocks(out, 1, bk), k.blocks(out, 0, bm)});

  auto m0 = k.block_id(1) * k.index(bm);
  auto k0 = k.block_id(0) * k.index(bk);
  auto y = dequantized(k,
                       {.data = x,
                        .sf = sf,
                        .e2m1 = s.e2m1 != 0,
                        .e5m6 = s.e5m6 != 0,
                        .packed = s.packed != 0,
                        .bm = s.bm,
                        .group = s.group,
                        .repeats = s.bm,
                        .threads = s.threads},
                       m0, k0, bm, bk);
  k.store(k.cast(y, s.out_dtype), out, {m0, k0});
  return k.build();
}

} // namespace tilejit::quant
