// psum_dsl.h - TileKernels 2.1's MoE row layout (tk21_ops §3.8) in the tile
// DSL: which rows of a tile belong to an expert, and which are padding, for
// the 2.1 SwiGLU ops.
#pragma once

#include "tilejit/compiler/dsl.h"

#include <cstdint>

namespace tilejit::quant {

/// 1 where row r0 + i (i < rows) is valid, else 0, as an i32 (rows, 1)
/// reduction result (broadcast it to the tile): r < `row_count` and
/// align(psum[e - 1], alignment) <= r < psum[e] for some e (psum[-1] = 0),
/// `psum` the kernel's (1, E) view of the i32 prefix sums. `experts`
/// (static) is a power of two, at least E and the block's threads: each
/// thread tests some (row, expert) pairs, and a maximum across the experts
/// decides. With one row the pairs are in the layout of the psum loads'
/// k.relayout, which leaves the kernel's vectors alone; with more, the
/// ends' broadcast over the rows is not, and rows x experts must be at
/// least threads x the kernel's vector not to narrow it. `alignment` is a power
/// of two.
inline dsl::Value psum_valid(dsl::KernelBuilder &k, const dsl::Tensor &psum,
                             dsl::Value row_count, dsl::Value r0, int64_t rows,
                             int64_t experts, int64_t alignment) {
  const auto i32 = DType::i32;
  const std::vector<int64_t> pairs = {rows, experts};
  auto zero = k.index(0);
  auto r = k.iota(pairs, 0) + k.cast(r0, i32);
  auto yes = k.full(pairs, 1, i32), no = k.full(pairs, 0, i32);
  // Ends psum[e] and starts align(psum[e - 1]); past E both read 0, an
  // empty segment. The load at column -1 reads psum[-1] = 0 (outside).
  // One a thread (k.relayout): these scalar loads leave the kernel's
  // vectors as they are.
  auto ends = k.relayout(k.load(psum, {zero, zero}, {1, experts}), 1);
  auto previous =
      k.relayout(k.load(psum, {zero, zero - k.index(1)}, {1, experts}), 1);
  auto starts = k.bit_and(previous + k.constant(alignment - 1, i32),
                          k.constant(-alignment, i32));
  auto in_x = k.lt(r, k.cast(row_count, i32));
  auto hit = k.select(
      in_x,
      k.select(k.ge(r, k.broadcast(starts, pairs)),
               k.select(k.lt(r, k.broadcast(ends, pairs)), yes, no), no),
      no);
  return k.reduce_max(hit, 1);
}

/// 1 where row r0 + i (i < rows) is padding, else 0, as an i32 (rows, 1)
/// reduction result: psum[e] <= r < align(psum[e], alignment) for some e
/// (the rows before expert e + 1's aligned start, or after the last
/// expert's end). `experts` as for psum_valid.
inline dsl::Value psum_padding(dsl::KernelBuilder &k, const dsl::Tensor &psum,
                               dsl::Value r0, int64_t rows, int64_t experts,
                               int64_t alignment) {
  const auto i32 = DType::i32;
  const std::vector<int64_t> pairs = {rows, experts};
  auto zero = k.index(0);
  auto r = k.iota(pairs, 0) + k.cast(r0, i32);
  auto yes = k.full(pairs, 1, i32), no = k.full(pairs, 0, i32);
  // Past E psum reads 0: [0, 0), no row.
  auto ends = k.relayout(k.load(psum, {zero, zero}, {1, experts}), 1);
  auto aligned = k.bit_and(ends + k.constant(alignment - 1, i32),
                           k.constant(-alignment, i32));
  auto hit =
      k.select(k.ge(r, k.broadcast(ends, pairs)),
               k.select(k.lt(r, k.broadcast(aligned, pairs)), yes, no), no);
  return k.reduce_max(hit, 1);
}

} // namespace tilejit::quant
