// per_block_cast_lossless.dsl.cpp - per_block_cast_lossless in the tile
// DSL: a block loads a block_m x block_k tile of packed fp4 and the
// exponents of its input scales, takes each output block's largest, and
// stores the e4m3 tile rescaled by powers of two and the output scales.
#include "quant/per_block_cast_lossless.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <vector>

namespace tilejit::quant {

Kernel per_block_cast_lossless_kernel(const PerBlockCastLosslessSpec &s) {
  dsl::KernelBuilder k("per_block_cast_lossless", s.threads);
  if (s.min_blocks > 0)
    k.min_blocks_per_sm(s.min_blocks);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t tm = s.block_m, tk = s.block_k;
  const int64_t groups = tk / s.x_bk;    // input scales a tile row
  const int64_t per = s.out_bk / s.x_bk; // of them an output block
  const int64_t nm = tm / s.out_bm, nk = tk / s.out_bk; // output blocks
  auto x = k.tensor("x_data", DType::u8, 2, access);
  // Input scales: f32 (M, copies, groups) of any strides, or the bytes (M,
  // copies, W, 4) of the packed int32, the copies of stride 0 (views in
  // per_block_cast_lossless.cpp).
  auto x_sf =
      k.tensor("x_sf", s.x_packed ? DType::u8 : DType::f32, s.x_packed ? 4 : 3);
  auto out = k.tensor("out", DType::e4m3, 2, access);
  const bool packed = s.sf_layout == SfLayout::packed_ue8m0;
  auto out_sf =
      k.tensor("out_sf", packed ? DType::u8 : DType::f32, packed ? 3 : 2);
  k.grid({k.blocks(out, 0, tm), k.blocks(out, 1, tk)});

  auto m0 = k.block_id(0) * k.index(tm), k0 = k.block_id(1) * k.index(tk);
  auto zero = k.index(0), four = k.index(4);
  auto u32 = [&](int64_t v) { return k.constant(v, DType::u32); };
  // The packed bytes: the even elements' codes (low nibbles) and the odd
  // ones' are decoded, scaled and cast apart, in the bytes' layout, and
  // stacked only as e4m3 (stacked earlier, the f32 tile would have twice
  // the kernel's vector and cross shared memory to meet the factors).
  // Decoded by a multiply (dsl::E2m1Decode): 46.0 us against 62.6 us by
  // selects at 8001 x 7168, (1, 128) blocks, on an H100 (session 66);
  // decoded after the scales' reduction, so that the f32 halves are not
  // held across its barrier (90 -> 80 registers, (128, 128) blocks 63.5 ->
  // 49.0 us, session 67).
  auto packed_x = k.load(x, {m0, k0 / k.index(2)}, {tm, tk / 2});

  // The biased exponents of the tile's input scales (0 past the end, which
  // never wins a maximum), one a thread: their few-byte loads leave the
  // data's vectors alone. Fewer scales than threads are read `copies` times
  // (a fragment has an element a thread) and taken back to one by a max.
  auto first = k0 / k.index(s.x_bk);
  const int64_t copies = std::max<int64_t>(1, s.threads / (tm * groups));
  dsl::Value e_in; // (tm, copies, groups) u32
  if (s.x_packed) {
    auto word = first / four;
    e_in =
        k.cast(k.relayout(k.load(x_sf, {m0, zero, word, first - word * four},
                                 {tm, copies, std::max<int64_t>(1, groups / 4),
                                  std::min<int64_t>(groups, 4)}),
                          1),
               DType::u32);
  } else {
    e_in = k.shr(
        k.bitcast(k.relayout(
                      k.load(x_sf, {m0, zero, first}, {tm, copies, groups}), 1),
                  DType::u32),
        u32(23));
  }
  // As output blocks, (nm, out_bm, 1, nk, per) after the copies are taken
  // back to one; e_out = max(e_max - 6, 0) per block, as (nm, 1, 1, nk, 1).
  auto blocks = k.reshape(e_in, {nm, s.out_bm, copies, nk, per});
  // Packed scales fill whole words: the bytes past the last real group of
  // a row (ceil(K / x_bk)) are not scales; they count as 0, as groups past
  // the end do.
  if (s.x_packed) {
    const std::vector<int64_t> shape = {nm, s.out_bm, copies, nk, per};
    auto group = k.iota(shape, 3, DType::u32) * u32(per) +
                 k.iota(shape, 4, DType::u32) + k.cast(first, DType::u32);
    auto real = k.cast((k.dim(out, 1) + k.index(s.x_bk - 1)) / k.index(s.x_bk),
                       DType::u32);
    blocks = k.select(k.lt(group, real), blocks, u32(0));
  }
  if (copies > 1)
    blocks = k.reduce_max(blocks, 2);
  auto e_max = k.reduce_max(k.reduce_max(blocks, 4), 1);
  auto e_out = k.select(k.ge(e_max, u32(6)), e_max - u32(6), u32(0));
  // Each input block's factor 2^(e_in - e_out), exact in f32, taken in
  // the data's layout: e_in and e_out broadcast over their elements (the
  // same value across a thread's vector, so one subtraction a vector). In
  // the scales' layout (one a thread), e_out's broadcast over the input
  // blocks would narrow every access of the kernel to one element.
  // (The even and odd elements of a byte are in one input group.)
  auto e_in_each = k.reshape(
      k.broadcast(k.reshape(blocks, {tm, groups, 1}), {tm, groups, s.x_bk / 2}),
      {tm, tk / 2});
  auto e_out_each = k.reshape(k.broadcast(k.reshape(e_out, {nm, 1, nk, 1}),
                                          {nm, s.out_bm, nk, s.out_bk / 2}),
                              {tm, tk / 2});
  auto factor =
      k.bitcast(k.shl(e_in_each - e_out_each + u32(127), u32(23)), DType::f32);
  const auto how = dsl::E2m1Decode::multiply;
  auto even = k.from_e2m1(k.bit_and(packed_x, k.constant(15, DType::u8)), how);
  auto odd = k.from_e2m1(k.shr(packed_x, k.constant(4, DType::u8)), how);
  auto e4m3 = [&](dsl::Value half) {
    return k.reshape(k.cast(half * factor, DType::e4m3), {tm, tk / 2, 1});
  };
  k.store(k.reshape(k.stack({e4m3(even), e4m3(odd)}), {tm, tk}), out, {m0, k0});

  // The output scales: 2^(e_out - 127) as f32, or the UE8M0 byte (scale j
  // of a row is byte j % 4 of word j / 4; fewer than 4 a tile fill part of
  // a word).
  auto row = k.block_id(0) * k.index(nm), col = k.block_id(1) * k.index(nk);
  auto e = k.reshape(e_out, {nm, nk});
  if (!packed) {
    k.store(k.bitcast(k.shl(e, u32(23)), DType::f32), out_sf, {row, col});
    return k.build();
  }
  auto bytes = k.cast(e, DType::u8);
  auto word = col / four;
  if (nk >= 4)
    k.store(k.reshape(bytes, {nm, nk / 4, 4}), out_sf, {row, word, zero});
  else
    k.store(k.reshape(bytes, {nm, 1, nk}), out_sf,
            {row, word, col - word * four});
  return k.build();
}

} // namespace tilejit::quant
