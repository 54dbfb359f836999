// batched_transpose_weight_sf.dsl.cpp - batched_transpose_weight_sf in the
// tile DSL. sf is read through views with a stride-0 dimension of bs (each
// scale bs times, as the outputs repeat it) whose last dimension is the one
// a word's four bytes come from, so that a word is a reduction over four
// neighbouring lanes (or one thread's vector). Block (g, i, t) takes
// c = cols scales from column t c: for sf0, row i's, as words of 4
// consecutive columns for the bs rows i bs + b; for sf1, rows 4i .. 4i + 3,
// as word i of the k-columns m bs + b. Reads past Nn or Nk give 0, the
// padding bytes.
#include "quant/batched_transpose_weight_sf.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel batched_transpose_weight_sf_kernel(const TransposeWeightSfSpec &s) {
  dsl::KernelBuilder k("batched_transpose_weight_sf", s.threads);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bs = s.block_size, c = s.cols;
  // (G, Nn, bs, Nk) and (G, Nk, bs, Nn): sf with a stride-0 dimension.
  auto sf_n = k.tensor("sf_n", DType::f32, 4);
  auto sf_k = k.tensor("sf_k", DType::f32, 4);
  // Words: sf0 as (G, Nn, bs, P0), sf1 as (G, P1, Nk, bs).
  auto sf0 = k.tensor("sf0_words", DType::u32, 4, access);
  auto sf1 = k.tensor("sf1_words", DType::u32, 4, access);
  k.grid({k.blocks(sf_n, 0), k.blocks(sf_n, 1), k.blocks(sf_n, 3, c)});
  auto g = k.block_id(0), i = k.block_id(1), zero = k.index(0);
  auto c0 = k.block_id(2) * k.index(c);
  auto u32 = [&](int64_t v) { return k.constant(v, DType::u32); };
  // The words of (..., 4) scales: the sum of each scale's UE8M0 byte
  // shifted to its place, over the last dimension (4 neighbouring lanes or
  // one thread). A byte is the exponent field of a power of two or 0, 0xFF
  // (NaN) for anything else (a sign or mantissa bit set).
  auto words = [&](dsl::Value v, const std::vector<int64_t> &shape) {
    auto bits = k.bitcast(k.reshape(v, shape), DType::u32);
    auto odd = k.bit_and(bits, u32(0x807FFFFF));
    auto code = k.select(k.eq(odd, u32(0)), bits >> u32(23), u32(0xFF));
    const int last = static_cast<int>(shape.size()) - 1;
    auto place = k.cast(k.iota(shape, last), DType::u32) * u32(8);
    return k.reduce_sum(k.shl(code, place), last);
  };
  // sf0: row i's columns 4p + j, for each of its bs rows: words (bs, p).
  auto row = k.load(sf_n, {g, i, zero, c0}, {1, 1, bs, c});
  k.store(k.reshape(words(row, {bs, c / 4, 4}), {1, 1, bs, c / 4}), sf0,
          {g, i, zero, c0 / k.index(4)});
  // sf1: rows 4i + j of each k-column m bs + b: words (m, b).
  auto rows = k.load(sf_k, {g, c0, zero, i * k.index(4)}, {1, c, bs, 4});
  k.store(k.reshape(words(rows, {c, bs, 4}), {1, 1, c, bs}), sf1,
          {g, i, c0, zero});
  return k.build();
}

} // namespace tilejit::quant
