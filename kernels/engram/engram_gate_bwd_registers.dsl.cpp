// engram_gate_bwd_registers.dsl.cpp - The Engram gate's backward with each
// persistent block's grad_w row in registers (`registers` = N columns a
// thread, where hc D / threads <= 32 N floats). A token's tensors are (T, hc
// D) rows, the heads side by side (head stride D, which the host checks), so
// every tile is (1, chunk) at a column known while the kernel is built: one
// address a tensor and token, the heads' and chunks' offsets immediates. A
// thread holds the same N columns of every head (chunk = N threads), so
// grad_v's sum over the heads stays in the thread, v is read once a column,
// and the block's grad_w row is hc D / chunk carried tiles, stored once
// after its last token. Per token: dL/dg's per-thread sums over the chunks
// (a loop), one block sum a head, the heads' scalars, then the chunks
// unrolled while the kernel is built (each head and chunk's accumulator is
// its own value), their loads straight from global memory.
#include "engram/engram_gate.h"

#include "tilejit/compiler/dsl.h"

#include <cmath>

namespace tilejit::engram {

Kernel engram_gate_bwd_registers_kernel(const EngramGateBwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_bwd", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto go = k.tensor("grad_out", bf16, 2, access);     // (T, hc D)
  auto x = k.tensor("hidden_states", bf16, 2, access); // (T, hc D)
  auto kk = k.tensor("k", bf16, 2, access);            // (T, hc D)
  auto v = k.tensor("v", bf16, 2, access);             // (T, D)
  // The weight (hc, D) as (T, hc D), token stride 0.
  auto w = k.tensor("weight_rows", f32, 2, dsl::repeating(access));
  std::vector<dsl::Tensor> saved; // (T, hc)
  for (const char *name : {"dot", "gate_score", "rstd_x", "rstd_k"})
    saved.push_back(k.tensor(name, f32, 2));
  std::optional<dsl::Tensor> image;
  if (s.image)
    image = k.tensor("image_token_mask", DType::u8, 1);
  auto gx = k.tensor("grad_x", bf16, 2, access);        // (T, hc D)
  auto gk = k.tensor("grad_k", bf16, 2, access);        // (T, hc D)
  auto gv = k.tensor("grad_v", bf16, 2, access);        // (T, D)
  auto gw = k.tensor("grad_w_partial", f32, 2, access); // (B, hc D)
  auto clamp = k.scalar("clamp_value", f32);
  const int64_t heads = s.heads, chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, chunk};
  k.grid({k.blocks(gw, 0)});
  auto b = k.block_id(0), zero = k.index(0);
  auto tokens = k.dim(go, 0), blocks = k.dim(gw, 0);
  auto per = (tokens + blocks - k.index(1)) / blocks;
  auto begin = k.min(b * per, tokens), end = k.min(begin + per, tokens);
  auto f = [&](Value a) { return k.cast(a, f32); };
  // N columns of every head a thread; tiles inside the tensors (t < T,
  // chunk | D).
  auto mine = [&](Value tile) { return k.relayout(tile, s.registers); };
  auto at = [&](int64_t h, int64_t c) {
    return k.index(h * s.hidden + c * chunk);
  };
  auto load = [&](const dsl::Tensor &src, Value row, Value col) {
    return mine(k.load(src, {row, col}, box, dsl::Bounds::promised_inside));
  };
  auto store = [&](Value tile, const dsl::Tensor &dst, Value row, Value col) {
    k.store(tile, dst, {row, col}, dsl::Bounds::promised_inside);
  };
  auto d = k.constant(static_cast<double>(s.hidden), f32);
  auto inv_sqrt_d =
      k.constant(1.0 / std::sqrt(static_cast<double>(s.hidden)), f32);
  auto zero_f = k.constant(0, f32), one = k.constant(1, f32);
  const Value none = mine(k.full(box, 0, f32));
  auto rows = k.serial(
      begin, end, std::vector<Value>(heads * chunks, none),
      [&](Value t, std::vector<Value> acc) {
        // dL/dg's per-thread sums of go * v, a head each.
        auto parts =
            k.serial(zero, k.index(chunks), std::vector<Value>(heads, none),
                     [&](Value c, std::vector<Value> part) {
                       Value c0 = c * k.index(chunk);
                       Value vc = f(load(v, t, c0));
                       for (int64_t h = 0; h < heads; ++h)
                         part[h] =
                             k.fma(f(load(go, t, c0 + k.index(h * s.hidden))),
                                   vc, part[h]);
                       return part;
                     });
        std::optional<Value> is_image;
        if (image)
          is_image = k.ne(k.load_scalar(*image, {t}), k.constant(0, DType::u8));
        // The heads' values, broadcast to the chunk's tile.
        std::vector<Value> dldp(heads), ax(heads), ak(heads), g(heads);
        for (int64_t h = 0; h < heads; ++h) {
          auto scalar = [&](int i) {
            return k.load_scalar(saved[i], {t, k.index(h)});
          };
          Value p = scalar(0), rx = scalar(2), rk = scalar(3);
          g[h] = scalar(1);
          Value dldg = k.reduce_sum(parts[h], 1); // (1, 1)
          auto cz = rx * rk * inv_sqrt_d, ap = k.abs(p);
          auto dp = dldg * (g[h] * (one - g[h])) * k.constant(0.5, f32) *
                    k.sqrt(cz / ap);
          // Clamped (|z| held at the clamp), P = 0, or an image token: 0.
          dp = k.select(k.lt(ap * cz, clamp), zero_f, dp);
          dp = k.select(k.eq(p, zero_f), zero_f, dp);
          if (is_image)
            dp = k.select(*is_image, zero_f, dp);
          dldp[h] = k.broadcast(dp, box);
          ax[h] = p * rx * rx / d;
          ak[h] = p * rk * rk / d;
        }
        for (int64_t c = 0; c < chunks; ++c) {
          Value grad_v = none;
          for (int64_t h = 0; h < heads; ++h) {
            Value col = at(h, c);
            Value goc = load(go, t, col), gof = f(goc);
            Value xc = f(load(x, t, col)), kc = f(load(kk, t, col));
            Value wc = load(w, t, col);
            Value grad_x = k.cast(gof + dldp[h] * (kc * wc - xc * ax[h]), bf16);
            Value grad_k = k.cast(dldp[h] * (xc * wc - kc * ak[h]), bf16);
            grad_v = grad_v + gof * g[h]; // from head 0 on, as the spec
            if (is_image) {               // grad_out bit for bit, and zeros
              grad_x = k.select(*is_image, goc, grad_x);
              grad_k = k.select(*is_image, k.full(box, 0, bf16), grad_k);
            }
            store(grad_x, gx, t, col);
            store(grad_k, gk, t, col);
            acc[h * chunks + c] = k.fma(dldp[h] * xc, kc, acc[h * chunks + c]);
          }
          Value grad_v16 = k.cast(grad_v, bf16);
          if (is_image)
            grad_v16 = k.select(*is_image, k.full(box, 0, bf16), grad_v16);
          store(grad_v16, gv, t, at(0, c));
        }
        return acc;
      });
  // Zeros where the block has no tokens.
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t c = 0; c < chunks; ++c)
      store(rows[h * chunks + c], gw, b, at(h, c));
  return k.build();
}

} // namespace tilejit::engram
