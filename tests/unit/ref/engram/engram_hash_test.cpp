// engram_hash_test.cpp - Tests of engram_hash_ref (spec §2.1): hand-worked
// hashes (XOR chain, floor-mod of negatives, int64 wrap, int32 narrowing),
// structural properties, sizes 0 and errors.
#include "engram/reference.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using namespace tilejit::engram;
using tilejit::DType;
using tilejit::ref::HostTensor;

namespace {

HostTensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) {
  return HostTensor::from(DType::i32, shape, v);
}
HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return HostTensor::from(DType::i64, shape, v);
}

/// The test suite's make_offsets: per layer, the exclusive prefix sum of the
/// flattened vocab sizes, int32.
HostTensor make_offsets(const HostTensor &vocab) {
  const int64_t layers = vocab.size(0), cols = vocab.size(1) * vocab.size(2);
  HostTensor out = HostTensor::zeros(DType::i32, {layers, cols});
  for (int64_t l = 0; l < layers; ++l) {
    int32_t sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      out.data<int32_t>()[l * cols + c] = sum;
      sum += vocab.data<int32_t>()[l * cols + c];
    }
  }
  return out;
}

std::vector<int32_t> flat(const HostTensor &t) {
  return {t.data<int32_t>(), t.data<int32_t>() + t.numel()};
}

} // namespace

TEST_CASE("engram_hash: hand-worked 2- and 3-gram hashes", "[ref][engram]") {
  // n = 3, L = 1, M = 2; vocab [[4, 6], [5, 9]] -> offsets [0, 4, 10, 15].
  HostTensor vocab = i32({1, 2, 2}, {4, 6, 5, 9});
  HostTensor offsets = make_offsets(vocab);
  CHECK(flat(offsets) == std::vector<int32_t>{0, 4, 10, 15});
  // token 0 = [1, 2, 3], m = [3, 5, 7]:
  //   h = 1*3 = 3; h ^= 2*5 -> 3 ^ 10 = 9: 9 mod 4 = 1, 9 mod 6 = 3 (+4)
  //   h ^= 3*7 -> 9 ^ 21 = 28: 28 mod 5 = 3 (+10), 28 mod 9 = 1 (+15)
  // token 1 = [-1, 4, 0]:
  //   h = -3; h ^= 20 -> -23: floor_mod(-23, 4) = 1, floor_mod(-23, 6) = 1
  //   (C++ % would give -3 and -5); h ^= 0 -> -23: floor_mod(-23, 5) = 2,
  //   floor_mod(-23, 9) = 4.
  HostTensor out = engram_hash_ref(i32({2, 3}, {1, 2, 3, -1, 4, 0}),
                                   i64({1, 3}, {3, 5, 7}), vocab, offsets);
  CHECK(out.shape() == std::vector<int64_t>{1, 2, 4});
  CHECK(flat(out) == std::vector<int32_t>{1, 7, 13, 16, 1, 5, 12, 19});
}

TEST_CASE("engram_hash: an image token's columns are -1 in every layer "
          "(2.1's image_token_mask)",
          "[ref][engram]") {
  HostTensor vocab = i32({2, 1, 2}, {4, 6, 5, 9});
  HostTensor offsets = make_offsets(vocab);
  HostTensor ids = i32({3, 2}, {1, 2, -1, 4, 7, 8});
  HostTensor mult = i64({2, 2}, {3, 5, 7, 11});
  HostTensor mask = HostTensor::zeros(DType::boolean, {3});
  mask.data<uint8_t>()[1] = 1;
  HostTensor plain = engram_hash_ref(ids, mult, vocab, offsets);
  HostTensor masked = engram_hash_ref(ids, mult, vocab, offsets, mask);
  std::vector<int32_t> want = flat(plain);
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t c = 0; c < 2; ++c)
      want[static_cast<size_t>((l * 3 + 1) * 2 + c)] = -1;
  CHECK(flat(masked) == want);
  CHECK(flat(plain)[2] != -1); // the token has buckets unmasked
  // Deliberate mistake: a mask of another length.
  CHECK_THROWS_WITH(
      engram_hash_ref(ids, mult, vocab, offsets,
                      HostTensor::zeros(DType::boolean, {2})),
      "engram_hash_ref: argument 'image_token_mask' has shape [2]; requires "
      "[T] = [3]");
}

TEST_CASE("engram_hash: int64 products wrap modulo 2^64", "[ref][engram]") {
  // token 0 = [2^31-1, 3], m = [2^62, 5]: (2^31-1) * 2^62 = 2^93 - 2^62
  // wraps to -2^62; h = -2^62 ^ 15 = -4611686018427387889;
  // floor_mod(h, 1000003) = 162344, floor_mod(h, 7) = 4 (+1000003).
  // token 1 = [3, 0]: 3 * 2^62 wraps to -2^62 (positive overflow turns
  // negative); floor_mod(-2^62, 1000003) = 162329, floor_mod(-2^62, 7) = 3.
  HostTensor vocab = i32({1, 1, 2}, {1000003, 7});
  HostTensor out = engram_hash_ref(i32({2, 2}, {2147483647, 3, 3, 0}),
                                   i64({1, 2}, {int64_t{1} << 62, 5}), vocab,
                                   make_offsets(vocab));
  CHECK(flat(out) == std::vector<int32_t>{162344, 1000007, 162329, 1000006});
}

TEST_CASE("engram_hash: the int32 result wraps like the original's cast",
          "[ref][engram]") {
  // h = (-1*1) ^ (0*1) = -1; floor_mod(-1, 2^31-1) = 2^31-2; plus the offset
  // 2^31-1 is 2^32-3, which narrows to -3.
  HostTensor out =
      engram_hash_ref(i32({1, 2}, {-1, 0}), i64({1, 2}, {1, 1}),
                      i32({1, 1, 1}, {2147483647}), i32({1, 1}, {2147483647}));
  CHECK(flat(out) == std::vector<int32_t>{-3});
}

TEST_CASE("engram_hash: buckets stay in their table; the 2-gram columns "
          "ignore the third token; layers are independent",
          "[ref][engram]") {
  const int64_t T = 200, n = 3, L = 2, M = 8;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> id(0, 99999), vs(100000, 999999);
  std::uniform_int_distribution<int64_t> mult(0, 99999);
  std::vector<int32_t> ids(T * n), vocab_v(L * (n - 1) * M);
  std::vector<int64_t> mult_v(L * n);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < n; ++i)
      // Even tokens repeat their predecessor's first two ids.
      ids[t * n + i] = (t % 2 == 1 && i < 2) ? ids[(t - 1) * n + i] : id(rng);
  for (auto &v : vocab_v)
    v = vs(rng);
  for (auto &m : mult_v)
    m = mult(rng);
  HostTensor vocab = i32({L, n - 1, M}, vocab_v), offsets = make_offsets(vocab);
  HostTensor out =
      engram_hash_ref(i32({T, n}, ids), i64({L, n}, mult_v), vocab, offsets);
  const int64_t cols = (n - 1) * M;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t bucket =
            out.at<int32_t>({l, t, c}) - int64_t{offsets.at<int32_t>({l, c})};
        CHECK((bucket >= 0 && bucket < vocab_v[l * cols + c]));
        if (t % 2 == 1 && c < M) // same 2-gram -> same 2-gram buckets
          CHECK(out.at<int32_t>({l, t, c}) == out.at<int32_t>({l, t - 1, c}));
      }
  // Changing layer 1's multipliers leaves layer 0 as it was.
  std::vector<int64_t> mult2 = mult_v;
  for (int64_t i = n; i < 2 * n; ++i)
    mult2[i] += 1;
  HostTensor out2 =
      engram_hash_ref(i32({T, n}, ids), i64({L, n}, mult2), vocab, offsets);
  std::vector<int32_t> a = flat(out), b = flat(out2);
  CHECK(std::vector<int32_t>(a.begin(), a.begin() + T * cols) ==
        std::vector<int32_t>(b.begin(), b.begin() + T * cols));
  CHECK(std::vector<int32_t>(a.begin() + T * cols, a.end()) !=
        std::vector<int32_t>(b.begin() + T * cols, b.end()));
}

TEST_CASE("engram_hash: zero tokens and a single id per token",
          "[ref][engram]") {
  HostTensor vocab = i32({2, 2, 3}, {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5});
  HostTensor out = engram_hash_ref(HostTensor::zeros(DType::i32, {0, 3}),
                                   i64({2, 3}, {1, 2, 3, 4, 5, 6}), vocab,
                                   make_offsets(vocab));
  CHECK(out.shape() == std::vector<int64_t>{2, 0, 6});
  // n = 1: no n-gram of length >= 2, so no columns.
  HostTensor one = engram_hash_ref(i32({3, 1}, {1, 2, 3}), i64({1, 1}, {7}),
                                   HostTensor::zeros(DType::i32, {1, 0, 4}),
                                   HostTensor::zeros(DType::i32, {1, 0}));
  CHECK(one.shape() == std::vector<int64_t>{1, 3, 0});
}

TEST_CASE("engram_hash: argument errors name the argument", "[ref][engram]") {
  HostTensor ids = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor mult = i64({1, 3}, {3, 5, 7});
  HostTensor vocab = i32({1, 2, 2}, {4, 6, 5, 9});
  HostTensor offsets = i32({1, 4}, {0, 4, 10, 15});
  // ids given as int64.
  CHECK_THROWS_WITH(
      engram_hash_ref(i64({2, 3}, {1, 2, 3, 4, 5, 6}), mult, vocab, offsets),
      "engram_hash_ref: argument 'ngram_token_ids' has dtype i64; requires "
      "i32");
  // multipliers for n = 2 with 3-grams.
  CHECK_THROWS_WITH(engram_hash_ref(ids, i64({1, 2}, {3, 5}), vocab, offsets),
                    "engram_hash_ref: argument 'multipliers' has shape [1, 2]; "
                    "requires [L, n] = [1, 3]");
  // offsets missing a column.
  CHECK_THROWS_WITH(engram_hash_ref(ids, mult, vocab, i32({1, 3}, {0, 4, 10})),
                    "engram_hash_ref: argument 'offsets' has shape [1, 3]; "
                    "requires [L, (n-1)*M] = [1, 4]");
  // A table of size 0.
  CHECK_THROWS_WITH(
      engram_hash_ref(ids, mult, i32({1, 2, 2}, {4, 0, 5, 9}), offsets),
      "engram_hash_ref: argument 'vocab_sizes' has value 0 at flat index 1; "
      "requires every size > 0");
  // ids transposed: not contiguous.
  HostTensor ids_t = i32({3, 2}, {1, 2, 3, 4, 5, 6}).transposed(0, 1);
  CHECK_THROWS_WITH(engram_hash_ref(ids_t, mult, vocab, offsets),
                    "engram_hash_ref: argument 'ngram_token_ids' has shape "
                    "[2, 3] and strides [1, 2]; requires a contiguous tensor");
}
