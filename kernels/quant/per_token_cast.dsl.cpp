// per_token_cast.dsl.cpp - per_token_cast in the tile DSL: a block loads a
// tile of rows, takes the absmax of each group of channels, turns it into a
// scale (§3.2) and stores the e4m3 (or packed e2m1) tile and the scales.
// Two tilings (see per_token_cast_tiling): block_m x block_k boxes
// (per_token_cast_boxes, which fused ops such as SwiGLU share with their own
// source of rows), or, for one group a row of K = parts x p, rows seen as
// parts.
#include "quant/per_token_cast.h"
#include "quant/dequant_dsl.h"
#include "quant/per_token_cast_dsl.h"
#include "quant/scale_dsl.h"
#include "quant/stochastic_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <optional>

namespace tilejit::quant {

namespace {

/// What both tilings store: the quantized values (e4m3, or e2m1 codes two a
/// byte along the last dimension, which halves) and the scales (f32, the
/// UE8M0 byte of packed scales, or E4M3 scales' bytes).
struct Stored {
  dsl::KernelBuilder &k;
  const PerTokenCastSpec &s;
  bool packed() const { return s.sf_layout == SfLayout::packed_ue8m0; }
  DType data_dtype() const { return s.e2m1 ? DType::u8 : DType::e4m3; }
  DType sf_dtype() const {
    return packed() ? DType::u8 : s.e4m3_sf ? DType::e4m3 : DType::f32;
  }
  FmtLimits limits() const {
    const FmtLimits l = s.e2m1 ? kE2m1Limits : kE4m3Limits;
    return s.e4m3_sf ? e4m3_sf_limits(l) : l;
  }
  /// A group's scales from its absmax: §3.2's, or E4M3 ones.
  Scales scales(dsl::Value absmax, FmtLimits l) const {
    return s.e4m3_sf ? e4m3_scales_of(k, absmax, l)
                     : scales_of(k, absmax, l, s.round_sf);
  }
  dsl::Value data(dsl::Value v) const {
    const auto how =
        s.e2m1_least ? dsl::E2m1Encode::least : dsl::E2m1Encode::select;
    return s.e2m1 ? k.pack_nibbles(k.to_e2m1(v, how)) : k.cast(v, DType::e4m3);
  }
  /// The same with stochastic_cast: v (rows, cols) from column c0, its
  /// quads' random bits from their scaled values and column quad index.
  dsl::Value data(dsl::Value v, dsl::Value c0, int64_t rows,
                  int64_t cols) const {
    if (!s.stochastic)
      return data(v);
    const std::vector<int64_t> shape = {rows, cols / 4, 4};
    auto q = k.reshape(v, shape);
    auto r = random_bits(k, q, c0 / k.index(4), shape);
    const bool convert = s.stochastic_convert != 0;
    if (s.e2m1)
      return k.pack_nibbles(
          k.reshape(round_e2m1(k, q, r, convert), {rows, cols}));
    return k.reshape(round_e4m3(k, q, r, convert), {rows, cols});
  }
  /// A column of x as a column of the stored data.
  dsl::Value column(dsl::Value c) const { return s.e2m1 ? c / k.index(2) : c; }
  dsl::Value sf(const Scales &sc) const {
    return packed() ? k.cast(sc.biased, DType::u8) : k.cast(sc.sf, sf_dtype());
  }
};

} // namespace

void per_token_cast_boxes(dsl::KernelBuilder &k, const PerTokenCastSpec &s,
                          const CastSource &src) {
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const Stored stored{k, s};
  const bool packed = stored.packed();
  const bool with_data = s.mode != CastMode::sf_only,
             with_sf = s.mode != CastMode::precomputed_sf;
  FmtLimits limits = stored.limits();
  if (src.clamp_min)
    limits.clamp_min = *src.clamp_min;
  const int64_t bm = s.block_m, bk = s.block_k, g = s.group;
  auto m0 = k.block_id(0) * k.index(bm);
  k.grid(
      {k.blocks(src.extent, 0, bm), k.blocks(src.extent, 1, bk / src.packing)});
  std::optional<dsl::Tensor> out, out_sf, given_sf;
  if (s.mode == CastMode::precomputed_sf)
    given_sf = k.tensor("sf", s.e4m3_sf ? DType::e4m3 : DType::f32, 3);
  if (with_data)
    out = k.tensor("out", stored.data_dtype(), 2, access);
  // Packed scales are bytes (m, k / 4, k % 4) of the int32 tensor.
  if (with_sf)
    out_sf = k.tensor("out_sf", stored.sf_dtype(), packed ? 3 : 2);
  // A tile that is one whole row (see per_token_cast_tiling) is inside x
  // and out: no bounds checks.
  const dsl::Bounds bounds =
      s.inside ? dsl::Bounds::promised_inside : dsl::Bounds::checked;
  // Quantizes the rows x cols box at (r0, c0) in groups of `group`
  // (`first` the box's first scale).
  auto quantize = [&](int64_t rows, int64_t cols, int64_t group, dsl::Value r0,
                      dsl::Value c0, dsl::Value first) {
    const int64_t n = cols / group;
    auto tile = src.tile(r0, c0, rows, cols, bounds);
    // A group that is not a power of two is parts x p: reduced over parts
    // (in registers), then over p (across threads).
    const int64_t p = group & -group, parts = group / p;
    auto groups = parts == 1 ? k.reshape(tile, {rows, n, group})
                             : k.reshape(tile, {rows, n, parts, p});
    if (!with_sf) { // given scales: groups of 16 to 128, parts == 1
      auto sf_inv =
          precomputed_sf_inv(k, *given_sf, r0, first, rows, n, s.threads);
      k.store(
          stored.data(k.reshape(groups * sf_inv, {rows, cols}), c0, rows, cols),
          *out, {r0, stored.column(c0)}, bounds);
      return;
    }
    auto absmax = parts == 1 ? k.reduce_absmax(groups, 2)
                             : k.reduce_max(k.reduce_absmax(groups, 2), 3);
    auto sc = stored.scales(absmax, limits);
    if (with_data)
      k.store(stored.data(k.reshape(groups * sc.sf_inv, {rows, cols}), c0, rows,
                          cols),
              *out, {r0, stored.column(c0)}, bounds);
    store_scales(k, stored.sf(sc), *out_sf, r0, first, rows, n, packed);
  };
  auto k0 = k.block_id(1) * k.index(bk);
  auto first = k.block_id(1) * k.index(bk / g);
  if (s.tail == 0) {
    quantize(bm, bk, g, m0, k0, first);
    return;
  }
  // The last `tail` columns (a shorter last group) do not fill a column
  // block: the last column of blocks takes only them, a bm x tail box, so
  // that no block is half past the end.
  auto cols = k.dim(src.extent, 1) * k.index(src.packing);
  k.if_else(
      k.lt(k0 + k.index(bk - 1), cols), {},
      [&](dsl::Value, std::vector<dsl::Value>) {
        quantize(bm, bk, g, m0, k0, first);
        return std::vector<dsl::Value>{};
      },
      [&](dsl::Value, std::vector<dsl::Value>) {
        auto c0 = cols - k.index(s.tail);
        quantize(bm, s.tail, s.tail, m0, c0, c0 / k.index(g));
        return std::vector<dsl::Value>{};
      });
}

Kernel per_token_cast_kernel(const PerTokenCastSpec &s) {
  if (s.e5m6)
    return per_token_cast_e5m6_kernel(s);
  dsl::KernelBuilder k("per_token_cast", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto f32 = [&](dsl::Value v) { return k.cast(v, DType::f32); };
  if (s.x_bm > 0) {
    // A quantized x (§4.3): its dequantized values, (x_q x sf_in) in f32,
    // quantized as any other (the reference's order). Packed e2m1 x has
    // two codes a byte: the extent's columns hold two values each.
    const bool e2m1 = s.in_dtype == DType::i8;
    const QuantizedInput in{
        .data = k.tensor("x", e2m1 ? DType::u8 : DType::e4m3, 2, access),
        .sf = k.tensor("x_sf", s.x_packed ? DType::u8 : DType::f32,
                       s.x_packed ? 4 : 3),
        .e2m1 = e2m1,
        .packed = s.x_packed != 0,
        .bm = s.x_bm,
        .group = s.x_group,
        .repeats = s.threads,
        .threads = s.threads};
    per_token_cast_boxes(k, s,
                         {.extent = in.data,
                          .tile =
                              [&](dsl::Value r0, dsl::Value c0, int64_t rows,
                                  int64_t cols, dsl::Bounds) {
                                return dequantized(k, in, r0, c0, rows, cols);
                              },
                          .packing = e2m1 ? 2 : 1});
    return k.build();
  }
  if (s.parts == 0) {
    auto x = k.tensor("x", s.in_dtype, 2, access);
    per_token_cast_boxes(
        k, s,
        {.extent = x,
         .tile = [&](dsl::Value r0, dsl::Value c0, int64_t rows, int64_t cols,
                     dsl::Bounds bounds) {
           return f32(k.load(x, {r0, c0}, {rows, cols}, bounds));
         }});
    return k.build();
  }
  // One group a row of parts x p columns, passed as (parts, M, p) views of
  // x and out. A tile is (parts, block_m, p) and each thread holds one
  // vector of every part of its row: reduced over the parts in registers,
  // then over p across threads.
  const Stored stored{k, s};
  const int64_t bm = s.block_m, p = s.block_k / s.parts;
  auto zero = k.index(0);
  auto m0 = k.block_id(0) * k.index(bm);
  auto x_parts = k.tensor("x_parts", s.in_dtype, 3, access);
  k.grid({k.blocks(x_parts, 1, bm)});
  auto tile = f32(k.load(x_parts, {zero, m0, zero}, {s.parts, bm, p}));
  auto sc =
      stored.scales(k.reduce_max(k.reduce_absmax(tile, 0), 2), stored.limits());
  if (s.mode != CastMode::sf_only)
    k.store(stored.data(tile * sc.sf_inv),
            k.tensor("out_parts", stored.data_dtype(), 3, access),
            {zero, m0, zero});
  auto out_sf = k.tensor("out_sf", stored.sf_dtype(), stored.packed() ? 3 : 2);
  store_scales(k, stored.sf(sc), out_sf, m0, zero, bm, 1, stored.packed());
  return k.build();
}

} // namespace tilejit::quant
