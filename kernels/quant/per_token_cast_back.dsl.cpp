// per_token_cast_back.dsl.cpp - per_token_cast_back (and cast_back) in the
// tile DSL: a block loads a block_m x block_k tile of e4m3 or packed e2m1
// data and the scales of its groups (one a row where a group spans the tile;
// a row of scales shared by bm rows in the block case), multiplies in f32
// (the tile seen as (rows, groups, channels), the scales broadcast along the
// channels) and stores bf16 or f32.
#include "quant/per_token_cast_back.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>

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
  dsl::Value v;
  if (s.e5m6) // 8 codes in 3 words
    v = k.from_e5m6(k.unpack_e5m6(
        k.load(x, {m0, k0 / k.index(8) * k.index(3)}, {bm, bk / 8 * 3})));
  else if (s.e2m1) // two codes a byte, the even element in the low nibble
    v = k.from_e2m1(
        k.unpack_nibbles(k.load(x, {m0, k0 / k.index(2)}, {bm, bk / 2})));
  else
    v = k.cast(k.load(x, {m0, k0}, {bm, bk}), DType::f32);
  // The tile's groups: bk / group of them, or one (a group spans the tile).
  const bool several = s.group > 0 && s.group < bk;
  const int64_t groups = several ? bk / s.group : 1;
  auto first = s.group > 0 ? k0 / k.index(s.group) : k.index(0);
  // The tile's rows take bm / s.bm rows of scales, each s.bm times. The
  // scales are laid out one a thread (relayout 1): their loads, a few bytes
  // a row, leave the data's and out's 16-byte vectors alone. Per token
  // (s.bm 1) a row of scales a row; else each row of scales is read `copies`
  // times through the stride-0 dimension (a load has an element a thread)
  // and taken back to one by a maximum.
  const int64_t rows = bm / s.bm;
  const int64_t copies =
      s.bm == 1 ? 1
                : std::min<int64_t>(
                      s.bm, std::max<int64_t>(1, s.threads / (rows * groups)));
  auto r0 = m0 / k.index(s.bm), zero = k.index(0);
  auto one_copy = [&](dsl::Value v, int dim) {
    return copies > 1 ? k.reduce_max(v, dim) : v;
  };
  dsl::Value scale; // (rows, 1 or s.bm, groups)
  if (s.packed) {
    // `first` is a multiple of min(groups, 4): whole words, or one's bytes.
    auto four = k.index(4);
    const int64_t words = std::max<int64_t>(1, groups / 4);
    auto codes =
        one_copy(k.cast(k.relayout(k.load(sf,
                                          {r0, zero, first / four,
                                           first - first / four * four},
                                          {rows, s.bm == 1 ? 1 : copies, words,
                                           std::min<int64_t>(groups, 4)}),
                                   1),
                        DType::u32),
                 1);
    // UE8M0: 2^(code - 127), the f32 whose exponent field is the code.
    scale = k.bitcast(
        k.shl(k.reshape(codes, {rows, 1, groups}), k.constant(23, DType::u32)),
        DType::f32);
  } else {
    scale = k.reshape(
        one_copy(k.relayout(k.load(sf, {r0, zero, first},
                                   {rows, s.bm == 1 ? 1 : copies, groups}),
                            1),
                 1),
        {rows, 1, groups});
  }
  // Per token the (rows, 1, groups) scales are the tile's rows; in blocks
  // each broadcasts over its s.bm rows.
  const int64_t per = s.bm == 1 ? 1 : s.bm;
  auto y = k.reshape(k.reshape(v, {rows, per, groups, bk / groups}) *
                         k.reshape(scale, {rows, 1, groups, 1}),
                     {bm, bk});
  k.store(k.cast(y, s.out_dtype), out, {m0, k0});
  return k.build();
}

} // namespace tilejit::quant
