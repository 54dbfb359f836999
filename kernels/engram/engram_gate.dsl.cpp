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
#include <functional>

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
  // v (T, D) as (T, hc, D) with head stride 0, the weight (hc, D) with
  // token stride 0: views that repeat rows.
  auto v = k.tensor("v_rows", bf16, 3, dsl::repeating(access));
  auto w = k.tensor("weight_rows", f32, 3, dsl::repeating(access));
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
  auto shared_tile = [&](Value buffer) {
    return k.load(buffer, {zero, zero, zero}, box);
  };
  // Pass 1: per-thread sums over the chunks (a loop: a chunk's loads in
  // flight at a time, few registers; or its chunks copied to shared memory
  // `stages` ahead).
  Value acc = k.full(box, 0, f32);
  // (w's tile read after the squares, as `w()`.)
  auto add = [&](Value xc, Value kc, const std::function<Value()> &w,
                 std::vector<Value> a) {
    Value xx = k.fma(xc, xc, a[0]), kk2 = k.fma(kc, kc, a[1]);
    return std::vector<Value>{xx, kk2, k.fma(xc * w(), kc, a[2])};
  };
  std::vector<Value> sums;
  if (s.stages == 0) {
    sums = k.serial(zero, k.index(chunks), {acc, acc, acc},
                    [&](Value c, std::vector<Value> a) {
                      auto xc = f(tile(x, c)), kc = f(tile(kk, c));
                      return add(
                          xc, kc, [&] { return tile(w, c); }, a);
                    });
  } else {
    auto sx = k.alloc_shared(bf16, box), sk = k.alloc_shared(bf16, box);
    auto sw = k.alloc_shared(f32, box);
    sums = k.pipelined(k.index(chunks), s.stages, {acc, acc, acc},
                       [&](Value c, std::vector<Value> a) {
                         auto d0 = c * k.index(chunk);
                         k.copy(x, {t, zero, d0}, sx);
                         k.copy(kk, {t, zero, d0}, sk);
                         k.copy(w, {t, zero, d0}, sw);
                         auto xc = f(shared_tile(sx)), kc = f(shared_tile(sk));
                         return add(
                             xc, kc, [&] { return shared_tile(sw); }, a);
                       });
  }
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
  // (v's tile read after x's is widened, as `v()`.)
  auto output = [&](Value c, Value xc, const std::function<Value()> &v) {
    Value xf = f(xc);
    Value o = k.cast(k.fma(gate, f(v()), xf), bf16);
    if (is_image)
      o = k.select(*is_image, xc, o);
    k.store(o, out, {t, zero, c * k.index(chunk)});
    return std::vector<Value>{};
  };
  if (s.stages == 0) {
    k.serial(zero, k.index(chunks), {}, [&](Value c, std::vector<Value>) {
      auto xc = tile(x, c);
      return output(c, xc, [&] { return tile(v, c); });
    });
  } else {
    // In place too: a chunk is copied before its output is stored.
    auto sx = k.alloc_shared(bf16, box), sv = k.alloc_shared(bf16, box);
    k.pipelined(k.index(chunks), s.stages, {},
                [&](Value c, std::vector<Value>) {
                  auto d0 = c * k.index(chunk);
                  k.copy(x, {t, zero, d0}, sx);
                  k.copy(v, {t, zero, d0}, sv);
                  auto xc = shared_tile(sx);
                  return output(c, xc, [&] { return shared_tile(sv); });
                });
  }
  return k.build();
}

} // namespace tilejit::engram

// Backward: persistent block b takes the tokens [b * ceil(T / B), ...) in
// turn, B = grad_w_partial's rows. A token is (1, hc, chunk) tiles of D,
// 8 consecutive columns of a head a thread; the saved values are scalars
// every thread reads, placed in their head's rows. dL/dg = sum go * v per head
// (one block sum), then dL/dP = dL/dg g (1 - g) / 2 sqrt(C / |P|) (0 where
// |P| C < clamp, and at P = 0), C = rstd_x rstd_k / sqrt(D); per column
// grad_x = bf16(go + dL/dP (k w - x P rstd_x^2 / D)), grad_k = bf16(dL/dP
// (x w - k P rstd_k^2 / D)), grad_v = bf16(sum over heads of go g), and
// dL/dP x k added to the block's grad_w row in place (zeroed first).
// `stages` 0: each pass a loop of loads (a chunk's loads in flight at a
// time); 1 to 4: each pass a k.pipelined loop whose chunks (and, in the
// second pass, the grad_w row's) are copied to shared memory that many
// stages ahead.
namespace tilejit::engram {

Kernel engram_gate_bwd_kernel(const EngramGateBwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_bwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto go = k.tensor("grad_out", bf16, 3, access);     // (T, hc, D)
  auto x = k.tensor("hidden_states", bf16, 3, access); // (T, hc, D)
  auto kk = k.tensor("k", bf16, 3, access);            // (T, hc, D)
  // v (T, D) as (T, hc, D) with head stride 0, the weight (hc, D) with
  // token stride 0: views that repeat rows.
  auto v = k.tensor("v_rows", bf16, 3, dsl::repeating(access));
  auto w = k.tensor("weight_rows", f32, 3, dsl::repeating(access));
  std::vector<dsl::Tensor> saved; // (T, hc)
  for (const char *name : {"dot", "gate_score", "rstd_x", "rstd_k"})
    saved.push_back(k.tensor(name, f32, 2));
  std::optional<dsl::Tensor> image;
  if (s.image)
    image = k.tensor("image_token_mask", DType::u8, 1);
  auto gx = k.tensor("grad_x", bf16, 3, access);
  auto gk = k.tensor("grad_k", bf16, 3, access);
  auto gv = k.tensor("grad_v_rows", bf16, 3, access);   // (T, 1, D)
  auto gw = k.tensor("grad_w_partial", f32, 3, access); // (B, hc, D)
  auto clamp = k.scalar("clamp_value", f32);
  const int64_t heads = std::bit_ceil(static_cast<uint32_t>(s.heads));
  const int64_t chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, heads, chunk};
  k.grid({k.blocks(gw, 0)});
  auto b = k.block_id(0), zero = k.index(0);
  auto tokens = k.dim(go, 0), blocks = k.dim(gw, 0);
  auto per = (tokens + blocks - k.index(1)) / blocks;
  auto begin = k.min(b * per, tokens), end = k.min(begin + per, tokens);
  auto f = [&](Value a) { return k.cast(a, f32); };
  auto d = k.constant(static_cast<double>(s.hidden), f32);
  auto inv_sqrt_d =
      k.constant(1.0 / std::sqrt(static_cast<double>(s.hidden)), f32);
  auto zero_f = k.constant(0, f32), one = k.constant(1, f32);
  auto chunk_loop = [&](const std::function<void(Value)> &body) {
    k.serial(zero, k.index(chunks), {}, [&](Value c, std::vector<Value>) {
      body(c * k.index(chunk));
      return std::vector<Value>{};
    });
  };
  // 8 consecutive columns of a head a thread (16-byte bf16 loads), from
  // the tensor or from a chunk's copy in shared memory.
  auto tile = [&](const dsl::Tensor &src, Value t, Value d0) {
    return k.relayout(k.load(src, {t, zero, d0}, box), 8);
  };
  auto shared_tile = [&](Value buffer) {
    return k.relayout(k.load(buffer, {zero, zero, zero}, box), 8);
  };
  // The block's grad_w row: zeros (also where it has no tokens), then each
  // token's terms added in place (L2-resident; each element read and
  // written by one thread, in token order).
  chunk_loop([&](Value d0) {
    k.store(k.full(box, 0, f32), gw, {b, zero, d0});
  });
  k.barrier();
  k.serial(begin, end, {}, [&](Value t, std::vector<Value>) {
    // Pass 1: dL/dg's per-thread partial sums of go * v.
    Value part = k.full(box, 0, f32);
    if (s.stages == 0) {
      part = k.serial(zero, k.index(chunks), {part},
                      [&](Value c, std::vector<Value> a) {
                        auto d0 = c * k.index(chunk);
                        return std::vector<Value>{
                            k.fma(f(tile(go, t, d0)), f(tile(v, t, d0)), a[0])};
                      })[0];
    } else {
      auto sgo = k.alloc_shared(bf16, box), sv = k.alloc_shared(bf16, box);
      part = k.pipelined(k.index(chunks), s.stages, {part},
                         [&](Value c, std::vector<Value> a) {
                           auto d0 = c * k.index(chunk);
                           k.copy(go, {t, zero, d0}, sgo);
                           k.copy(v, {t, zero, d0}, sv);
                           return std::vector<Value>{k.fma(
                               f(shared_tile(sgo)), f(shared_tile(sv)), a[0])};
                         })[0];
    }
    auto dldg = k.broadcast(k.reduce_sum(part, 2), box);
    // A saved value of each head in its columns: the heads' scalars picked
    // by the row (head) index.
    auto head = k.relayout(k.iota(box, 1), 8);
    auto per_head = [&](const dsl::Tensor &src) {
      Value v = k.load_scalar(src, {t, zero});
      for (int64_t h = 1; h < s.heads; ++h)
        v = k.select(k.eq(head, k.constant(static_cast<double>(h), DType::i32)),
                     k.load_scalar(src, {t, k.index(h)}), v);
      return v;
    };
    auto p = per_head(saved[0]), g = per_head(saved[1]);
    auto rx = per_head(saved[2]), rk = per_head(saved[3]);
    auto cz = rx * rk * inv_sqrt_d, ap = k.abs(p);
    auto dldp = dldg * (g * (one - g)) * k.constant(0.5, f32) * k.sqrt(cz / ap);
    // Clamped (|z| held at the clamp), P = 0, or an image token: 0.
    dldp = k.select(k.lt(ap * cz, clamp), zero_f, dldp);
    dldp = k.select(k.eq(p, zero_f), zero_f, dldp);
    std::optional<Value> is_image;
    if (image) {
      is_image = k.ne(k.load_scalar(*image, {t}), k.constant(0, DType::u8));
      dldp = k.select(*is_image, zero_f, dldp);
    }
    auto ax = p * rx * rx / d, ak = p * rk * rk / d;
    // Pass 2: a chunk's gradients from its tiles; returns the grad_w row's
    // chunk with this token's terms added.
    // (The tiles are read in this order: `src(i)` is grad_out, x, k, w and
    // the row's chunk for i = 0 to 4.)
    auto grads = [&](Value d0, const std::function<Value(int)> &src) {
      Value goc = src(0), gof = f(goc), xc = f(src(1)), kc = f(src(2));
      Value wc = src(3);
      Value grad_x = k.cast(gof + dldp * (kc * wc - xc * ax), bf16);
      Value grad_k = k.cast(dldp * (xc * wc - kc * ak), bf16);
      Value grad_v = k.cast(k.reduce_sum(gof * g, 1), bf16);
      if (is_image) { // grad_out bit for bit, and zeros
        grad_x = k.select(*is_image, goc, grad_x);
        grad_k = k.select(*is_image, k.full(box, 0, bf16), grad_k);
        grad_v = k.select(*is_image, k.full({1, 1, chunk}, 0, bf16), grad_v);
      }
      k.store(grad_x, gx, {t, zero, d0});
      k.store(grad_k, gk, {t, zero, d0});
      k.store(grad_v, gv, {t, zero, d0});
      k.store(k.fma(dldp * xc, kc, src(4)), gw, {b, zero, d0});
    };
    if (s.stages == 0) {
      chunk_loop([&](Value d0) {
        const dsl::Tensor *from[] = {&go, &x, &kk, &w, &gw};
        grads(d0, [&](int i) { return tile(*from[i], i == 4 ? b : t, d0); });
      });
    } else {
      // The row's chunk is copied too: its last store (the block's previous
      // token) came before this loop's barriers.
      auto sgo = k.alloc_shared(bf16, box), sx = k.alloc_shared(bf16, box);
      auto sk = k.alloc_shared(bf16, box), sw = k.alloc_shared(f32, box);
      auto srow = k.alloc_shared(f32, box);
      k.pipelined(k.index(chunks), s.stages, {},
                  [&](Value c, std::vector<Value>) {
                    auto d0 = c * k.index(chunk);
                    k.copy(go, {t, zero, d0}, sgo);
                    k.copy(x, {t, zero, d0}, sx);
                    k.copy(kk, {t, zero, d0}, sk);
                    k.copy(w, {t, zero, d0}, sw);
                    k.copy(gw, {b, zero, d0}, srow);
                    const Value from[] = {sgo, sx, sk, sw, srow};
                    grads(d0, [&](int i) { return shared_tile(from[i]); });
                    return std::vector<Value>{};
                  });
    }
    return std::vector<Value>{};
  });
  return k.build();
}

} // namespace tilejit::engram
