// batched_transpose_weight_sf.dsl.cpp - batched_transpose_weight_sf in the
// tile DSL. sf is read through a view (G, Nn, Nk, bs) whose last dimension
// has stride 0 (each scale bs times, as the outputs repeat it), so that a
// fragment's fastest dimension is the outputs' contiguous one. Block
// (g, i, t) takes c = cols scales from column t c: for sf0, row i's, as
// words of 4 consecutive columns for the bs rows i bs + b; for sf1, rows
// 4i .. 4i + 3, as word i of the k-columns m bs + b. A word's bytes are
// summed from their shifted codes (a reduction over the word's 4 rows or
// columns), and words are stored 16 bytes at a time. Reads past Nn or Nk
// give 0, the padding bytes.
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
  k.grid({k.blocks(sf, 0), k.blocks(sf, 1), k.blocks(sf, 2, c)});
  auto g = k.block_id(0), i = k.block_id(1), zero = k.index(0);
  auto c0 = k.block_id(2) * k.index(c);
  auto u32 = [&](int64_t v) { return k.constant(v, DType::u32); };
  // The words of (..., 4, ..., bs) scales along `dim` (of size 4): the sum
  // of each scale's UE8M0 byte shifted to its place. A byte is the
  // exponent field of a power of two or 0, 0xFF (NaN) for anything else
  // (a sign or mantissa bit set).
  auto words = [&](dsl::Value v, const std::vector<int64_t> &shape, int dim) {
    auto bits = k.bitcast(k.reshape(v, shape), DType::u32);
    auto odd = k.bit_and(bits, u32(0x807FFFFF));
    auto code = k.select(k.eq(odd, u32(0)), bits >> u32(23), u32(0xFF));
    auto place = k.cast(k.iota(shape, dim), DType::u32) * u32(8);
    return k.reduce_sum(k.shl(code, place), dim);
  };
  // sf0: columns 4p + j of row i, word p for each of its bs rows.
  auto row = k.load(sf, {g, i, c0, zero}, {1, 1, c, bs});
  k.store(k.reshape(words(row, {c / 4, 4, bs}, 1), {1, 1, c / 4, bs}), sf0,
          {g, i, c0 / k.index(4), zero});
  // sf1: rows 4i + j, word i of each k-column.
  auto sf1_words = [&] {
    auto rows = k.load(sf, {g, i * k.index(4), c0, zero}, {1, 4, c, bs});
    k.store(k.reshape(words(rows, {4, c, bs}, 0), {1, 1, c, bs}), sf1,
            {g, i, c0, zero});
  };
  if (s.sf1_rows_only)
    k.when(k.lt(i, k.dim(sf1, 1)), sf1_words);
  else
    sf1_words();
  return k.build();
}

} // namespace tilejit::quant
