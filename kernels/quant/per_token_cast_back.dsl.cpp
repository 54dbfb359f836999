// per_token_cast_back.dsl.cpp - per_token_cast_back in the tile DSL: a block
// loads a block_m x block_k tile of e4m3 data and the scales of its groups
// (one a row where a group spans the tile), multiplies in f32 (the tile seen
// as (rows, groups, channels), the scales broadcast along the channels) and
// stores bf16 or f32.
#include "quant/per_token_cast_back.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel per_token_cast_back_kernel(const CastBackSpec &s) {
  dsl::KernelBuilder k("per_token_cast_back", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x_data", DType::e4m3, 2, access);
  // Packed scales are bytes (m, w, j) of the int32 tensor: group 4w + j.
  auto sf =
      k.tensor("x_sf", s.packed ? DType::u8 : DType::f32, s.packed ? 3 : 2);
  auto out = k.tensor("out", s.out_dtype, 2, access);
  const int64_t bm = s.block_m, bk = s.block_k;
  // Consecutive blocks take consecutive column tiles of the same rows, so
  // that the rows' bytes are read and written together.
  k.grid({k.blocks(x, 1, bk), k.blocks(x, 0, bm)});

  auto m0 = k.block_id(1) * k.index(bm);
  auto k0 = k.block_id(0) * k.index(bk);
  auto v = k.cast(k.load(x, {m0, k0}, {bm, bk}), DType::f32);
  // The tile's groups: bk / group of them, or one (a group spans the tile).
  const bool several = s.group > 0 && s.group < bk;
  const int64_t groups = several ? bk / s.group : 1;
  auto first = s.group > 0 ? k0 / k.index(s.group) : k.index(0);
  // The scales are laid out one a thread (relayout 1): their loads, a few
  // bytes a row, leave the data's and out's 16-byte vectors alone.
  dsl::Value scale;
  if (s.packed) {
    // groups divides 4 and `first` is a multiple of it: one int32's bytes.
    auto four = k.index(4);
    auto codes =
        k.relayout(k.load(sf, {m0, first / four, first - first / four * four},
                          {bm, 1, groups}),
                   1);
    // UE8M0: 2^(code - 127), the f32 whose exponent field is the code.
    scale = k.bitcast(k.shl(k.cast(k.reshape(codes, {bm, groups}), DType::u32),
                            k.constant(23, DType::u32)),
                      DType::f32);
  } else {
    scale = k.relayout(k.load(sf, {m0, first}, {bm, groups}), 1);
  }
  auto y = k.reshape(k.reshape(v, {bm, groups, bk / groups}) *
                         k.reshape(scale, {bm, groups, 1}),
                     {bm, bk});
  k.store(k.cast(y, s.out_dtype), out, {m0, k0});
  return k.build();
}

} // namespace tilejit::quant
