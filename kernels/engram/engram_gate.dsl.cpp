// engram_gate.dsl.cpp - The Engram gate in the tile DSL. Forward: a block
// a token, its (heads, chunk) tiles of D. The first pass adds x^2, k^2 and
// x * w * k per thread; a block sum each gives Sx, Sk and P per head; then
// z = P rstd_x rstd_k / sqrt(D), g = sigmoid(copysign(sqrt(max(|z|,
// clamp)), z)), and the second pass reads x again and writes bf16(fma(g,
// v, x)) (every element read, then written, by one thread: in place when
// out is hidden_states).
#include "engram/engram_gate.h"

#include "tilejit/compiler/dsl.h"

#include <bit>
#include <cmath>

namespace tilejit::engram {

Kernel engram_gate_fwd_kernel(const EngramGateFwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_fwd", s.threads);
  k.programmatic_launch();
  // Two blocks an SM (at most 64 registers a thread at 512 threads): a
  // block's reductions and gate overlap the other's loads.
  k.min_blocks_per_sm(2);
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("hidden_states", bf16, 3, access); // (T, hc, D)
  auto kk = k.tensor("k", bf16, 3, access);            // (T, hc, D)
  auto v = k.tensor("v_rows", bf16, 3, access);        // head stride 0
  auto w = k.tensor("weight_rows", f32, 3, access);    // token stride 0
  auto out = k.tensor("out", bf16, 3, access);
  std::optional<dsl::Tensor> image;
  if (s.image)
    image = k.tensor("image_token_mask", DType::u8, 1);
  std::vector<dsl::Tensor> saved;
  if (s.save)
    for (const char *name : {"dot", "gate_score", "rstd_x", "rstd_k"})
      saved.push_back(k.tensor(name, f32, 3)); // (T, hc, 1)
  auto eps = k.scalar("eps", f32);
  auto clamp = k.scalar("clamp_value", f32);
  const int64_t heads = std::bit_ceil(static_cast<uint32_t>(s.heads));
  const int64_t chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, heads, chunk};
  k.grid({k.blocks(x, 0)});
  auto t = k.block_id(0), zero = k.index(0);
  auto tile = [&](const dsl::Tensor &src, Value c) {
    return k.load(src, {t, zero, c * k.index(chunk)}, box);
  };
  auto f = [&](Value v) { return k.cast(v, f32); };
  // Pass 1: per-thread sums over the chunks (a loop: a chunk's loads in
  // flight at a time, few registers).
  Value acc = k.full(box, 0, f32);
  auto sums = k.serial(zero, k.index(chunks), {acc, acc, acc},
                       [&](Value c, std::vector<Value> a) {
                         auto xc = f(tile(x, c)), kc = f(tile(kk, c));
                         return std::vector<Value>{
                             k.fma(xc, xc, a[0]), k.fma(kc, kc, a[1]),
                             k.fma(xc * tile(w, c), kc, a[2])};
                       });
  Value sx = sums[0], sk = sums[1], p = sums[2];
  auto d = k.constant(static_cast<double>(s.hidden), f32);
  auto dot = k.reduce_sum(p, 2); // (1, heads, 1)
  auto rstd_x = k.rsqrt(k.reduce_sum(sx, 2) / d + eps);
  auto rstd_k = k.rsqrt(k.reduce_sum(sk, 2) / d + eps);
  // 1 / sqrt(D) in double, used as f32 (TileKernels' constant).
  auto scale = k.constant(1.0 / std::sqrt(static_cast<double>(s.hidden)), f32);
  auto z = dot * rstd_x * rstd_k * scale;
  auto r = k.sqrt(k.max(k.abs(z), clamp));
  auto zero_f = k.constant(0, f32);
  r = k.select(k.lt(z, zero_f), zero_f - r, r);
  r = k.select(k.ne(z, z), z, r); // a NaN score: a NaN gate
  auto g = k.sigmoid(r);
  if (s.save) {
    const Value values[4] = {dot, g, rstd_x, rstd_k};
    for (int i = 0; i < 4; ++i)
      k.store(values[i], saved[i], {t, zero, zero});
  }
  std::optional<Value> is_image;
  if (image)
    is_image = k.ne(k.load_scalar(*image, {t}), k.constant(0, DType::u8));
  // Pass 2: x again (an L2 hit: the block read it just now).
  auto gate = k.broadcast(g, box);
  k.serial(zero, k.index(chunks), {}, [&](Value c, std::vector<Value>) {
    auto xc = tile(x, c);
    Value o = k.cast(k.fma(gate, f(tile(v, c)), f(xc)), bf16);
    if (is_image)
      o = k.select(*is_image, xc, o);
    k.store(o, out, {t, zero, c * k.index(chunk)});
    return std::vector<Value>{};
  });
  return k.build();
}

} // namespace tilejit::engram
