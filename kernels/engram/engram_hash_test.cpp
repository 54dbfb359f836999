// engram_hash_test.cpp - engram_hash's case table: TileKernels' shapes and
// value ranges, int64 products that wrap and hashes below zero (floor_mod),
// other n-gram and table counts (odd column counts), 2.1's image tokens, no
// columns, no tokens, the benchmark shape with TileKernels' time, and
// mistakes. Bitwise.
#include "op_test.h"

namespace tilejit::harness {

TILEJIT_OP_TEST(engram_hash) {
  // TileKernels' test ranges: ids and multipliers in [0, 1e5), tables of
  // [1e5, 1e6) buckets; offsets as large as their prefix sums.
  OpTest t{.op = "engram_hash",
           .fills = {{"ngram_token_ids", integers(0, 99999)},
                     {"multipliers", integers(0, 99999)},
                     {"vocab_sizes", integers(100000, 999999)},
                     {"offsets", integers(0, 20000000)}},
           .poison_outputs = true};
  for (int64_t tokens : {4001, 8001})
    t.cases.push_back({.label = "", .shape = {tokens, 3, 2, 8}});
  // Products that wrap modulo 2^64 and hashes of either sign; small
  // tables (many buckets hit).
  t.cases.push_back(
      {.label = "wrapping",
       .shape = {1000, 3, 2, 8},
       .fills = {
           {"ngram_token_ids", integers(-2147483648, 2147483647)},
           {"multipliers", integers(-(int64_t{1} << 62), int64_t{1} << 62)},
           {"vocab_sizes", integers(1, 40)}}});
  // Other n-gram sizes and table counts: 5 and 9 columns (no vectors).
  t.cases.push_back({.label = "", .shape = {333, 2, 3, 5}});
  t.cases.push_back({.label = "", .shape = {257, 4, 1, 3}});
  t.cases.push_back({.label = "", .shape = {100, 5, 2, 16}});
  t.cases.push_back({.label = "image tokens",
                     .shape = {2049, 3, 2, 8},
                     .set = {{"image_token_mask", "passed"}},
                     .fills = {{"image_token_mask", bytes_in(0, 1)}}});
  t.cases.push_back({.label = "unigrams: no columns", .shape = {64, 1, 2, 8}});
  t.cases.push_back({.label = "no tokens", .shape = {0, 3, 2, 8}});
  t.cases.push_back({.label = "",
                     .shape = {8001, 3, 2, 8},
                     .kind = Case::bench,
                     .peer_us = 6.08});
  t.errors = {
      {"vocab_sizes with n n-grams",
       {fake(DType::i32, {100, 3}), fake(DType::i64, {2, 3}, {}, 0x90000),
        fake(DType::i32, {2, 3, 8}, {}, 0xa0000),
        fake(DType::i32, {2, 16}, {}, 0xb0000), ops::absent(),
        fake(DType::i32, {2, 100, 16}, {}, 0xc0000)},
       {},
       "engram_hash: argument 'vocab_sizes' has 3 n-grams a layer; requires "
       "n - 1 = 2 (ngram_token_ids has n = 3)"},
      {"offsets of M columns",
       {fake(DType::i32, {100, 3}), fake(DType::i64, {2, 3}, {}, 0x90000),
        fake(DType::i32, {2, 2, 8}, {}, 0xa0000),
        fake(DType::i32, {2, 8}, {}, 0xb0000), ops::absent(),
        fake(DType::i32, {2, 100, 8}, {}, 0xc0000)},
       {},
       "engram_hash: argument 'offsets' has 8 columns a layer; requires (n - "
       "1) * M = 16"}};
  return t;
}

} // namespace tilejit::harness
