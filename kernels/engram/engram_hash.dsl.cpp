// engram_hash.dsl.cpp - engram_hash in the tile DSL: a block takes block_t
// tokens of one layer, a row of C = (n - 1) * M columns each. Each column
// c runs the hash h_i = h_{i-1} ^ x_i * m_i (int64, wrapping) up to its
// n-gram i = c / M + 1 and writes floor_mod(h, vocab[c]) + offsets[c],
// narrowed to int32 (-1 for an image token).
#include "engram/engram_hash.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::engram {

Kernel engram_hash_kernel(const EngramHashSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_hash", s.threads);
  k.programmatic_launch();
  const auto i32 = DType::i32, i64 = DType::i64;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  // The ids and the mask as rows of stride 0 along the columns: every
  // column's thread reads its token's (the hash is a column's work).
  auto ids = k.tensor("ngram_token_ids_columns", i32, 3); // (T, n, C)
  auto mult = k.tensor("multipliers", i64, 2);            // (L, n)
  // A layer's sizes and offsets as rows of stride 0 along the tokens.
  auto vocab = k.tensor("vocab_rows", i32, 3, access);    // (L, T, C)
  auto offsets = k.tensor("offset_rows", i32, 3, access); // (L, T, C)
  auto out = k.tensor("out", i32, 3, access);             // (L, T, C)
  std::optional<dsl::Tensor> image;
  if (s.image)
    image = k.tensor("image_token_mask_columns", DType::u8, 2); // (T, C)
  const int64_t bt = s.block_t, n = s.ngram, tables = s.tables;
  const auto cols = static_cast<int64_t>(
      std::bit_ceil(static_cast<uint64_t>((n - 1) * tables)));
  k.grid({k.blocks(mult, 0), k.blocks(ids, 0, bt)});
  auto layer = k.block_id(0), t0 = k.block_id(1) * k.index(bt);
  auto zero = k.index(0);
  // Column c belongs to n-gram c / M + 1: its h is the last h_i whose
  // first column (i - 1) * M is at most c.
  auto col = k.iota({bt, cols}, 1);
  Value h, hashes;
  for (int64_t i = 0; i < n; ++i) {
    auto x = k.reshape(k.load(ids, {t0, k.index(i), zero}, {bt, 1, cols}),
                       {bt, cols});
    auto p = k.cast(x, i64) * k.load_scalar(mult, {layer, k.index(i)});
    h = i == 0 ? p : (h ^ p);
    if (i <= 1) // (n = 1: no columns, nothing stored)
      hashes = h;
    else
      hashes =
          k.select(k.ge(col, k.constant((i - 1) * tables, i32)), h, hashes);
  }
  // Columns past C (not stored) read size 0: 1 instead, no division by 0.
  auto rows = [&](const dsl::Tensor &t) {
    return k.reshape(k.load(t, {layer, t0, zero}, {1, bt, cols}), {bt, cols});
  };
  auto size = k.max(k.cast(rows(vocab), i64), k.constant(1, i64));
  auto r = hashes % size; // C's remainder: the sign of h
  r = k.select(k.lt(r, k.constant(0, i64)), r + size, r);
  auto bucket = k.cast(r, i32) + rows(offsets);
  if (image) {
    auto flag = k.load(*image, {t0, zero}, {bt, cols});
    bucket = k.select(k.ne(flag, k.constant(0, DType::u8)), k.constant(-1, i32),
                      bucket);
  }
  k.store(k.reshape(bucket, {1, bt, cols}), out, {layer, t0, zero});
  return k.build();
}

} // namespace tilejit::engram
