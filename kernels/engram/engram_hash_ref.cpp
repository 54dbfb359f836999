// engram_hash_ref.cpp - Multi-table n-gram hash of token ids (spec §2.1).
#include "engram/reference.h"
#include "engram/validate.h"

#include <algorithm>

namespace tilejit::engram {

namespace {

constexpr std::string_view kFn = "engram_hash_ref";

/// a * b modulo 2^64 as int64 (the original's wrapping int64 multiply;
/// signed overflow is undefined in C++, so multiply as unsigned).
int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// Floor modulo for a positive divisor: the result is in [0, m).
int64_t floor_mod(int64_t h, int64_t m) {
  int64_t r = h % m;
  return r < 0 ? r + m : r;
}

} // namespace

HostTensor engram_hash_ref(const HostTensor &ngram_token_ids,
                           const HostTensor &multipliers,
                           const HostTensor &vocab_sizes,
                           const HostTensor &offsets,
                           const std::optional<HostTensor> &image_token_mask) {
  using namespace detail;
  check_dtype(kFn, "ngram_token_ids", ngram_token_ids, DType::i32);
  check_dtype(kFn, "multipliers", multipliers, DType::i64);
  check_dtype(kFn, "vocab_sizes", vocab_sizes, DType::i32);
  check_dtype(kFn, "offsets", offsets, DType::i32);
  check_rank(kFn, "ngram_token_ids", ngram_token_ids, 2, "[T, n]");
  check_rank(kFn, "multipliers", multipliers, 2, "[L, n]");
  const int64_t num_tokens = ngram_token_ids.size(0);
  const int64_t n = ngram_token_ids.size(1);
  const int64_t layers = multipliers.size(0);
  if (n < 1)
    throw UserError(fmt::format("{}: argument 'ngram_token_ids' has shape "
                                "[{}, {}]; requires n >= 1 ids per token",
                                kFn, num_tokens, n));
  check_shape(kFn, "multipliers", multipliers, {layers, n}, "[L, n]");
  check_rank(kFn, "vocab_sizes", vocab_sizes, 3, "[L, n-1, M]");
  const int64_t tables = vocab_sizes.size(2);
  check_shape(kFn, "vocab_sizes", vocab_sizes, {layers, n - 1, tables},
              "[L, n-1, M]");
  const int64_t cols = (n - 1) * tables;
  check_shape(kFn, "offsets", offsets, {layers, cols}, "[L, (n-1)*M]");
  check_contiguous(kFn, "ngram_token_ids", ngram_token_ids);
  check_contiguous(kFn, "multipliers", multipliers);
  check_contiguous(kFn, "vocab_sizes", vocab_sizes);
  check_contiguous(kFn, "offsets", offsets);
  const uint8_t *image = image_flags(kFn, image_token_mask, num_tokens);

  const int32_t *ids = ngram_token_ids.data<int32_t>();
  const int64_t *mult = multipliers.data<int64_t>();
  const int32_t *vocab = vocab_sizes.data<int32_t>();
  const int32_t *offs = offsets.data<int32_t>();
  // A zero or negative table size has no floor-mod range (the original
  // divides by it: undefined); we reject it.
  for (int64_t i = 0; i < vocab_sizes.numel(); ++i)
    if (vocab[i] <= 0)
      throw UserError(fmt::format("{}: argument 'vocab_sizes' has value {} at "
                                  "flat index {}; requires every size > 0",
                                  kFn, vocab[i], i));

  HostTensor out = HostTensor::zeros(DType::i32, {layers, num_tokens, cols});
  int32_t *o = out.data<int32_t>();
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t t = 0; t < num_tokens; ++t) {
      if (image && image[t] != 0) {
        std::fill_n(o + (l * num_tokens + t) * cols, cols, -1);
        continue;
      }
      const int32_t *x = ids + t * n;
      const int64_t *m = mult + l * n;
      int64_t h = wrapping_mul(x[0], m[0]);
      for (int64_t i = 1; i < n; ++i) {
        h ^= wrapping_mul(x[i], m[i]);
        for (int64_t j = 0; j < tables; ++j) {
          int64_t col = (i - 1) * tables + j;
          int64_t bucket =
              floor_mod(h, vocab[(l * (n - 1) + i - 1) * tables + j]);
          // The sum is formed in int64 and narrowed to int32 modulo 2^32 (the
          // original's int32 cast); it only wraps when offsets are near 2^31.
          o[(l * num_tokens + t) * cols + col] =
              static_cast<int32_t>(bucket + offs[l * cols + col]);
        }
      }
    }
  }
  return out;
}

} // namespace tilejit::engram
