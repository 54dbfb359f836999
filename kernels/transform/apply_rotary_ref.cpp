// apply_rotary_ref.cpp - CPU reference of TileKernels 2.1's apply_rotary
// (shared/specs/tk21_ops.md §7): rotary position embedding of query and key
// in place, NeoX or GPT-J pairs, the kernel's FMA placement.
#include "transform/reference.h"

#include "common/convert.h"

#include "tilejit/error.h"

#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <span>
#include <vector>

namespace tilejit::transform {

using ref::HostTensor;

namespace {

constexpr std::string_view fn = "apply_rotary_ref";

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> what, Args &&...args) {
  throw UserError(fmt::format("{}: {}", fn,
                              fmt::format(what, std::forward<Args>(args)...)));
}

float load(const HostTensor &t, std::span<const int64_t> i) {
  return t.dtype() == DType::bf16 ? ref::bf16_to_f32(t.at<uint16_t>(i))
                                  : t.at<float>(i);
}

void store(const HostTensor &t, std::span<const int64_t> i, float v) {
  if (t.dtype() == DType::bf16)
    t.at<uint16_t>(i) = ref::f32_to_bf16(v);
  else
    t.at<float>(i) = v;
}

/// (B, T, H, R) of a 3-D (T, H, R) or 4-D x.
std::array<int64_t, 4> dims(const HostTensor &x) {
  if (x.rank() == 3)
    return {1, x.size(0), x.size(1), x.size(2)};
  return {x.size(0), x.size(1), x.size(2), x.size(3)};
}

void check_x(std::string_view arg, const HostTensor &x, int64_t rotary) {
  if (x.dtype() != DType::bf16 && x.dtype() != DType::f32)
    fail("argument '{}' has dtype {}; requires bf16 or f32", arg,
         name_of(x.dtype()));
  if (x.rank() != 3 && x.rank() != 4)
    fail("argument '{}' has shape [{}]; requires (T, H, R) or (B, T, H, R)",
         arg, fmt::join(x.shape(), ", "));
  if (x.size(x.rank() - 1) != rotary)
    fail("argument '{}' has shape [{}]; requires the last dimension R = {} "
         "(the columns of 'cos_sin_cache')",
         arg, fmt::join(x.shape(), ", "), rotary);
  if (x.numel() > 0 && x.strides().back() != 1)
    fail("argument '{}' has strides [{}]; requires stride 1 along R", arg,
         fmt::join(x.strides(), ", "));
}

/// Rotates every head of x in place, token positions `pos` (B x T).
void rotate(const HostTensor &x, const HostTensor &cache,
            const std::vector<int64_t> &pos, bool interleaved, bool conjugate) {
  const auto [batches, tokens, heads, r] = dims(x);
  const int64_t half = r / 2;
  std::vector<int64_t> i(static_cast<size_t>(x.rank()));
  auto index = [&](int64_t b, int64_t t, int64_t h, int64_t col) {
    if (x.rank() == 3)
      i = {t, h, col};
    else
      i = {b, t, h, col};
    return std::span<const int64_t>(i);
  };
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t t = 0; t < tokens; ++t) {
      const int64_t p = pos[static_cast<size_t>(b * tokens + t)];
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t k = 0; k < half; ++k) {
          const float c = cache.at<float>({p, k}),
                      s = cache.at<float>({p, half + k});
          const int64_t ca = interleaved ? 2 * k : k;
          const int64_t cb = interleaved ? 2 * k + 1 : k + half;
          const float a = load(x, index(b, t, h, ca));
          const float bv = load(x, index(b, t, h, cb));
          const float a2 =
              conjugate ? std::fma(a, c, bv * s) : std::fma(a, c, -(bv * s));
          const float b2 =
              conjugate ? std::fma(a, -s, bv * c) : std::fma(a, s, bv * c);
          store(x, index(b, t, h, ca), a2);
          store(x, index(b, t, h, cb), b2);
        }
    }
}

} // namespace

void apply_rotary_ref(const HostTensor &query, const HostTensor &cos_sin_cache,
                      const std::optional<HostTensor> &key,
                      const std::optional<HostTensor> &positions,
                      bool interleaved, bool conjugate, int64_t seqlen_offset) {
  if (cos_sin_cache.dtype() != DType::f32 || cos_sin_cache.rank() != 2)
    fail("argument 'cos_sin_cache' is {}[{}]; requires f32 (L, R)",
         name_of(cos_sin_cache.dtype()),
         fmt::join(cos_sin_cache.shape(), ", "));
  const int64_t rotary = cos_sin_cache.size(1), length = cos_sin_cache.size(0);
  if (rotary != 64 && rotary != 128)
    fail("argument 'cos_sin_cache' has shape [{}, {}]; requires R = 64 or 128 "
         "columns (cos, then sin, of R / 2 frequencies)",
         length, rotary);
  check_x("query", query, rotary);
  const auto [batches, tokens, heads, r] = dims(query);
  (void)heads;
  (void)r;
  if (key) {
    check_x("key", *key, rotary);
    const auto kd = dims(*key);
    if (key->dtype() != query.dtype() || key->rank() != query.rank() ||
        kd[0] != batches || kd[1] != tokens)
      fail("argument 'key' is {}[{}]; requires query's dtype {}, rank {} and "
           "tokens [{}]",
           name_of(key->dtype()), fmt::join(key->shape(), ", "),
           name_of(query.dtype()), query.rank(),
           fmt::join(std::vector<int64_t>(query.shape().begin(),
                                          query.shape().end() - 2),
                     ", "));
  }
  // Each token's position, in int32 as the kernel computes it.
  std::vector<int64_t> pos(static_cast<size_t>(batches * tokens));
  if (positions) {
    const bool ok_dtype =
        positions->dtype() == DType::i32 || positions->dtype() == DType::i64;
    const bool ok_shape =
        query.rank() == 3
            ? positions->rank() == 1 && positions->size(0) == tokens
            : positions->rank() == 2 && positions->size(0) == batches &&
                  positions->size(1) == tokens;
    if (!ok_dtype || !ok_shape)
      fail("argument 'positions' is {}[{}]; requires i32 or i64 {}",
           name_of(positions->dtype()), fmt::join(positions->shape(), ", "),
           query.rank() == 3 ? fmt::format("[{}] (T)", tokens)
                             : fmt::format("[{}, {}] (B, T)", batches, tokens));
  }
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t t = 0; t < tokens; ++t) {
      int64_t given = t;
      if (positions) {
        const std::vector<int64_t> at = query.rank() == 3
                                            ? std::vector<int64_t>{t}
                                            : std::vector<int64_t>{b, t};
        given = positions->dtype() == DType::i32
                    ? positions->at<int32_t>(std::span<const int64_t>(at))
                    : positions->at<int64_t>(std::span<const int64_t>(at));
      }
      const auto p = static_cast<int32_t>(
          static_cast<uint32_t>(seqlen_offset + given)); // int32 wrap
      if (p < 0 || p >= length)
        fail("token {} of batch {} is at position {} (seqlen_offset {} + {}); "
             "requires a row of 'cos_sin_cache' in [0, {})",
             t, b, p, seqlen_offset, given, length);
      pos[static_cast<size_t>(b * tokens + t)] = p;
    }
  rotate(query, cos_sin_cache, pos, interleaved, conjugate);
  if (key)
    rotate(*key, cos_sin_cache, pos, interleaved, conjugate);
}

} // namespace tilejit::transform
