// apply_rotary.dsl.cpp - apply_rotary in the tile DSL. A block takes
// `tokens` tokens of `heads_block` heads; for each token its position p
// (int32: seqlen_offset + positions[b, t], or + t) picks the cache row whose
// cos and sin are loaded through a view that repeats the row over the heads
// (head stride 0), so that they arrive in the layout of x's pairs. A
// position outside the cache reads cos = sin = 0. NeoX pairs are the two
// halves of a head; GPT-J pairs (2i, 2i + 1) are split and joined in
// registers. a' = fma(a, c, -(b s)), b' = fma(a, s, b c) (conjugate: fma(a,
// c, b s), fma(a, -s, b c)) in f32, rounded to x's dtype.
#include "transform/apply_rotary.h"

#include "tilejit/compiler/dsl.h"

#include <optional>

namespace tilejit::transform {

Kernel apply_rotary_kernel(const ApplyRotarySpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("apply_rotary", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32, i32 = DType::i32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x4", s.dtype, 4, access); // (B, T, H, R)
  auto out = k.tensor("out4", s.dtype, 4, access);
  // (1, L, H, R), strides (0, row, 0, 1): a cache row for every head.
  auto cache =
      k.tensor("cache_heads", f32, 4, dsl::vectors_of(s.cache_vector_bytes));
  std::optional<dsl::Tensor> positions;
  if (s.positions)
    positions = k.tensor("positions2", s.positions_dtype, 2); // (B, T)
  auto offset = k.scalar("seqlen_offset", i32);
  const int64_t r = s.rotary, half = r / 2, hb = s.heads_block;
  k.grid({k.blocks(x, 1, s.tokens), k.blocks(x, 0), k.blocks(x, 2, hb)});
  auto b = k.block_id(1), t0 = k.block_id(0) * k.index(s.tokens);
  auto h0 = k.block_id(2) * k.index(hb), zero = k.index(0);
  const std::vector<int64_t> pairs = {1, 1, hb, half};
  // Each thread's chunk: 4 pairs (cos and sin: 4 f32; x: 4 or 8 elements).
  auto chunked = [&](Value v, int vector) { return k.relayout(v, vector); };
  auto minus = k.constant(-1, f32); // -x exactly (-0 for +0)
  auto rotate = [&](Value a, Value bv, Value c, Value sn) {
    if (s.conjugate)
      return std::pair{k.fma(a, c, bv * sn), k.fma(a, minus * sn, bv * c)};
    return std::pair{k.fma(a, c, minus * (bv * sn)), k.fma(a, sn, bv * c)};
  };
  k.unroll(0, s.tokens, {}, [&](Value j, std::vector<Value>) {
    auto t = t0 + j;
    Value p = k.cast(t, i32);
    if (positions)
      p = k.cast(k.load_scalar(*positions, {b, t}), i32);
    p = p + offset;
    auto c = chunked(k.load(cache, {zero, p, h0, zero}, pairs), 4);
    auto sn = chunked(k.load(cache, {zero, p, h0, k.index(half)}, pairs), 4);
    if (!s.interleaved) {
      auto a = k.cast(chunked(k.load(x, {b, t, h0, zero}, pairs), 4), f32);
      auto bv =
          k.cast(chunked(k.load(x, {b, t, h0, k.index(half)}, pairs), 4), f32);
      auto [a2, b2] = rotate(a, bv, c, sn);
      k.store(k.cast(a2, s.dtype), out, {b, t, h0, zero});
      k.store(k.cast(b2, s.dtype), out, {b, t, h0, k.index(half)});
    } else {
      // (1, 1, hb, R) as (hb, R / 2, 2): the pairs' a and b side by side.
      auto v = chunked(k.load(x, {b, t, h0, zero}, {1, 1, hb, r}), 8);
      auto parts = k.unstack(k.reshape(k.cast(v, f32), {hb, half, 2}));
      auto [a2, b2] = rotate(parts[0], parts[1], k.reshape(c, {hb, half, 1}),
                             k.reshape(sn, {hb, half, 1}));
      auto joined = k.reshape(k.stack({a2, b2}), {1, 1, hb, r});
      k.store(k.cast(joined, s.dtype), out, {b, t, h0, zero});
    }
    return std::vector<Value>{};
  });
  return k.build();
}

} // namespace tilejit::transform
