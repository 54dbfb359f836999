// per_channel_cast.dsl.cpp - per_channel_cast in the tile DSL: a block
// loads block_m x block_k of x, takes the absmax of each column over each
// bm rows, and stores the e4m3 tile and the block_m / bm rows of scales
// (f32, or 2.1's column-pack UE8M0 bytes); transposed, the bf16 tile is
// transposed first and each channel's absmax taken along its row. The SwiGLU
// form loads the gate and up halves of x instead and casts bf16(SwiGLU(gate,
// up)); a quantized x (fused's, or 2.1's through dequant_dsl.h) is multiplied
// by its scales first. A plain x's tile may go through a shared tile instead of
// staying in registers until the scales are known (`stage`), and SwiGLU's
// activation may be computed a few rows at a time into one (`swiglu_chunk`).
#include "quant/per_channel_cast.h"
#include "quant/dequant_dsl.h"
#include "quant/scale_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <optional>

namespace tilejit::quant {

Kernel per_channel_cast_kernel(const PerChannelCastSpec &s) {
  dsl::KernelBuilder k(s.swiglu
                           ? "swiglu_forward_and_per_channel_cast_and_transpose"
                       : s.transpose        ? "per_channel_cast_and_transpose"
                       : s.x_sf || s.gather ? "per_channel_cast_fused"
                                            : "per_channel_cast",
                       s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bm = s.bm, tm = s.block_m, tk = s.block_k, n = tm / bm;
  auto x = k.tensor(s.swiglu ? "gate" : "x", s.in_dtype, 2, access);
  std::optional<dsl::Tensor> up, x_sf, pos;
  std::optional<QuantizedInput> quantized;
  if (s.x_group)
    quantized = QuantizedInput{
        .data = x,
        .sf = k.tensor("x_sf", s.x_sf_dtype, s.x_sf_dtype == DType::u8 ? 4 : 3),
        .packed = s.x_sf_dtype == DType::u8,
        .group = s.x_group,
        .repeats = s.threads,
        .threads = s.threads};
  std::optional<dsl::Value> clamp;
  if (s.swiglu)
    up = k.tensor("up", s.in_dtype, 2, access);
  if (s.clamp)
    clamp = k.scalar("swiglu_clamp_value", DType::f32);
  if (s.x_sf) // (N, copies, K / 128), the copies of stride 0
    x_sf = k.tensor("x_sf", DType::f32, 3);
  if (s.gather)
    pos = k.tensor("pos_to_token", DType::i32, 1);
  auto out = k.tensor("out", DType::e4m3, 2, access);
  auto out_sf = s.col_pack ? k.tensor("out_sf", DType::u8, 3)
                           : k.tensor("out_sf", DType::f32, 2);
  // out's rows: x's (R = N), or pos_to_token's.
  k.grid({k.blocks(s.gather ? out : x, 0, tm), k.blocks(x, 1, tk)});

  auto m0 = k.block_id(0) * k.index(tm), k0 = k.block_id(1) * k.index(tk);
  // Whole tiles (the op says): x's and out's accesses unchecked.
  const auto bounds =
      s.inside ? dsl::Bounds::promised_inside : dsl::Bounds::checked;
  auto rows = [&](const dsl::Tensor &t, dsl::Value col, int64_t cols) {
    return s.gather ? k.gather(t, *pos, {m0, col}, {tm, cols})
                    : k.load(t, {m0, col}, {tm, cols}, bounds);
  };
  // §11's order (t = 1 + expf(-g), (g / t) * u) after the clamp in f32,
  // the activation rounded to bf16.
  auto swiglu = [&](dsl::Value g, dsl::Value u) {
    if (clamp) {
      g = k.min(g, *clamp);
      u = k.min(k.max(u, k.constant(0, DType::f32) - *clamp), *clamp);
    }
    auto t = k.constant(1, DType::f32) + k.exp(k.constant(0, DType::f32) - g);
    return k.cast((g / t) * u, DType::bf16);
  };
  auto f32 = [&](dsl::Value v) { return k.cast(v, DType::f32); };
  // x's tile as loaded (plain x), or SwiGLU's bf16 activation
  std::optional<dsl::Value> raw;
  dsl::Value tile;
  std::optional<dsl::Value> x_scales; // a quantized x's
  if (quantized) {
    raw = stored_data(k, *quantized, m0, k0, tm, tk);
    x_scales = tile_scales(k, *quantized, m0, k0, tm, tk);
  } else if (up && s.swiglu_chunk) {
    // The activation of swiglu_chunk rows at a time, into a shared tile
    // read back whole: the gate and up halves of the tile are never all
    // in registers at once.
    auto act = k.alloc_shared(DType::bf16, {tm, tk});
    for (int64_t r = 0; r < tm; r += s.swiglu_chunk) {
      auto at = [&](const dsl::Tensor &t) {
        return f32(
            k.load(t, {m0 + k.index(r), k0}, {s.swiglu_chunk, tk}, bounds));
      };
      k.store(swiglu(at(x), at(*up)), act, {k.index(r), k.index(0)});
    }
    k.barrier();
    raw = k.load(act, {k.index(0), k.index(0)}, {tm, tk});
  } else if (up) {
    raw = swiglu(f32(rows(x, k0, tk)), f32(rows(*up, k0, tk)));
  } else {
    raw = rows(x, k0, tk);
  }
  if (s.transpose) {
    // TileKernels' order: the bf16 tile transposed first (one trip through
    // shared memory); each channel is then a row of (tk, tm), whose
    // blocks' absmax its threads take within a warp. out is stored a
    // channel a row, out_sf through its transposed view (K, M / bm),
    // bound so by the op.
    auto t = k.reshape(f32(k.transpose(*raw)), {tk, n, bm});
    if (s.min_blocks)
      k.min_blocks_per_sm(s.min_blocks);
    auto sc = scales_of(k, k.reduce_absmax(t, 2), kE4m3Limits, s.round_sf);
    k.store(k.reshape(k.cast(t * sc.sf_inv, DType::e4m3), {tk, tm}), out,
            {k0, m0}, bounds);
    k.store(k.reshape(sc.sf, {tk, n}), out_sf, {k0, k.block_id(0) * k.index(n)},
            bounds);
    return k.build();
  }
  // x * x_sf, per 128 columns (kernel tiles hold whole groups)
  const int64_t g = tk / 128;
  std::optional<dsl::Value> sf;
  if (s.x_sf) {
    // Read one scale a thread in a layout of its own: as a (tm, g) access
    // it would cap every access of the kernel at g elements a vector.
    // Fewer scales than threads are read `copies` times through the
    // stride-0 dimension (a load has an element a thread) and taken back
    // to one by a maximum.
    const int64_t copies = std::max<int64_t>(1, s.threads / (tm * g));
    auto zero = k.index(0), col = k.block_id(1) * k.index(g);
    auto one = k.relayout(
        s.gather ? k.gather(*x_sf, *pos, {m0, zero, col}, {tm, copies, g})
                 : k.load(*x_sf, {m0, zero, col}, {tm, copies, g}, bounds),
        1);
    if (copies > 1)
      one = k.reduce_max(one, 1);
    sf = k.broadcast(k.reshape(one, {tm, g, 1}), {tm, g, 128});
  }
  // x's tile as loaded, in f32 and times its scales if it has any
  auto scaled = [&](dsl::Value v) {
    if (x_scales)
      return dequantized_as(k, *quantized, v, *x_scales, tm, tk);
    if (!sf)
      return f32(v);
    return k.reshape(k.reshape(f32(v), {tm, g, 128}) * *sf, {tm, tk});
  };
  if (raw)
    tile = scaled(*raw);
  auto blocks = k.reshape(tile, {n, bm, tk});
  std::optional<dsl::Value> staged;
  if (s.stage) { // x as loaded, read back after the absmax
    staged = k.alloc_shared(s.in_dtype, {tm, tk});
    k.store(*raw, *staged, {k.index(0), k.index(0)});
  }
  if (s.min_blocks)
    k.min_blocks_per_sm(s.min_blocks);
  auto sc = scales_of(k, k.reduce_absmax(blocks, 1), kE4m3Limits, s.round_sf);
  if (s.stage) {
    k.barrier();
    blocks =
        k.reshape(scaled(k.load(*staged, {k.index(0), k.index(0)}, {tm, tk})),
                  {n, bm, tk});
  }
  k.store(k.reshape(k.cast(blocks * sc.sf_inv, DType::e4m3), {tm, tk}), out,
          {m0, k0}, bounds);
  auto b0 = k.block_id(0) * k.index(n); // the tile's first scale row
  if (s.col_pack) { // bytes (Q, 4, K): block b is byte b % 4 of word row b / 4
    auto q = b0 / k.index(4);
    k.store(k.reshape(k.cast(sc.biased, DType::u8), {1, n, tk}), out_sf,
            {q, b0 - q * k.index(4), k0});
  } else {
    k.store(k.reshape(sc.sf, {n, tk}), out_sf, {b0, k0}, bounds);
  }
  return k.build();
}

} // namespace tilejit::quant
