// batched_transpose_weight_sf.dsl.cpp - batched_transpose_weight_sf in the
// tile DSL. sf is read through a view (G, Nn, Nk, bs) whose last dimension
// has stride 0 (each scale bs times, as the outputs repeat it), so that a
// fragment's fastest dimension is the outputs' contiguous one. Block
// (g, q, t) loads rows 4q .. 4q + 3 of the scales, c = cols columns from
// column t c, and writes both outputs' words of them: for sf0, each row's
// words of 4 consecutive columns, for its bs rows r bs + b; for sf1, word q
// of the k-columns m bs + b. A word's bytes are summed from their shifted
// codes (a reduction over the word's 4 columns or rows, within a thread:
// thread b holds column b of the repeats), and a warp stores 32 consecutive
// words at once. Reads past Nn or Nk give 0, the padding bytes.
#include "quant/batched_transpose_weight_sf.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel batched_transpose_weight_sf_kernel(const TransposeWeightSfSpec &s) {
  dsl::KernelBuilder k("batched_transpose_weight_sf", s.threads);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bs = s.block_size, c = s.cols;
  auto sf = k.tensor("sf_k", DType::f32, 4);
  // Words: sf0 as (G, Nn, P0, bs), sf1 as (G, P1, Nk, bs).
  auto sf0 = k.tensor("sf0_words", DType::u32, 4, access);
  auto sf1 = k.tensor("sf1_words", DType::u32, 4, access);
  // Block (g, q, t): rows 4q .. 4q + 3 of the scales, columns t c ..
  // t c + c - 1; both outputs' words of them come from the one tile.
  k.grid({k.blocks(sf, 0), k.blocks(sf1, 1), k.blocks(sf, 2, c)});
  auto g = k.block_id(0), q = k.block_id(1), zero = k.index(0);
  auto c0 = k.block_id(2) * k.index(c), r0 = q * k.index(4);
  auto u32 = [&](int64_t v) { return k.constant(v, DType::u32); };
  // Each scale's UE8M0 byte: the exponent field of a power of two or 0,
  // 0xFF (NaN) for anything else (a sign or mantissa bit set).
  auto tile = k.load(sf, {g, r0, c0, zero}, {1, 4, c, bs});
  auto bits = k.bitcast(tile, DType::u32);
  auto odd = k.bit_and(bits, u32(0x807FFFFF));
  auto code = k.select(k.eq(odd, u32(0)), bits >> u32(23), u32(0xFF));
  // The words of the bytes along `dim` (of size 4) of `code` as `shape`:
  // the sum of each byte shifted to its place.
  auto words = [&](const std::vector<int64_t> &shape, int dim) {
    auto place = k.cast(k.iota(shape, dim), DType::u32) * u32(8);
    return k.reduce_sum(k.shl(k.reshape(code, shape), place), dim);
  };
  // sf0: columns 4p + j of each row r0 + a, word p for each of its bs rows
  // (rows past Nn not stored).
  k.store(k.reshape(words({4, c / 4, 4, bs}, 2), {1, 4, c / 4, bs}), sf0,
          {g, r0, c0 / k.index(4), zero});
  // sf1: rows r0 + j, word q of each k-column.
  k.store(k.reshape(words({4, c, bs}, 0), {1, 1, c, bs}), sf1,
          {g, q, c0, zero});
  return k.build();
}

} // namespace tilejit::quant
