// engram_gate.dsl.cpp - The Engram gate in the tile DSL. Forward: a block
// a token, its (heads, chunk) tiles of D. The first pass adds x^2, k^2 and
// x * w * k per thread; a block sum each gives Sx, Sk and P per head; then
// z = P rstd_x rstd_k / sqrt(D), g = sigmoid(copysign(sqrt(max(|z|,
// clamp)), z)), and the second pass reads x again and writes bf16(fma(g,
// v, x)) (every element read, then written, by one thread: in place when
// out is hidden_states).
#include "engram/engram_gate.h"

#include "tilejit/compiler/dsl.h"

#include <array>
#include <bit>
#include <cmath>
#include <deque>
#include <functional>

namespace tilejit::engram {

namespace {

constexpr DType f32 = DType::f32, bf16 = DType::bf16;

/// A tensor a chunk pass reads: its tiles at (row, 0, the chunk's start).
struct ChunkSource {
  const dsl::Tensor *tensor;
  dsl::Value row;
  DType dtype;
};

/// Reads the chunk's tile of source `i` (at stages 0 a load where it is
/// read; else the copy's shared tile).
using ChunkRead = std::function<dsl::Value(int)>;

/// One pass over a token's `chunks` chunks of `box` (its last side the
/// chunk): `body(d0, read, carried)` gets the chunk's first column, its
/// tiles (relaid out to `vector` elements a thread where not 0) and the
/// carried values, and returns the next. At stages 0 a loop of loads (a
/// chunk's loads in flight at a time); else k.pipelined, every source's
/// chunk copied to shared memory `stages` ahead.
std::vector<dsl::Value>
chunk_pass(dsl::KernelBuilder &k, int64_t chunks, int stages,
           const std::vector<int64_t> &box, int vector,
           const std::vector<ChunkSource> &sources,
           std::vector<dsl::Value> init,
           const std::function<std::vector<dsl::Value>(
               dsl::Value, const ChunkRead &, std::vector<dsl::Value>)> &body) {
  using dsl::Value;
  const Value zero = k.index(0);
  auto laid_out = [&](Value tile) {
    return vector ? k.relayout(tile, vector) : tile;
  };
  if (stages == 0)
    return k.serial(
        zero, k.index(chunks), std::move(init),
        [&](Value c, std::vector<Value> carried) {
          Value d0 = c * k.index(box.back());
          return body(
              d0,
              [&](int i) {
                const ChunkSource &src = sources[i];
                return laid_out(k.load(*src.tensor, {src.row, zero, d0}, box));
              },
              std::move(carried));
        });
  std::vector<Value> buffers;
  for (const ChunkSource &src : sources)
    buffers.push_back(k.alloc_shared(src.dtype, box));
  return k.pipelined(
      k.index(chunks), stages, std::move(init),
      [&](Value c, std::vector<Value> carried) {
        Value d0 = c * k.index(box.back());
        for (size_t i = 0; i < sources.size(); ++i)
          k.copy(*sources[i].tensor, {sources[i].row, zero, d0}, buffers[i]);
        return body(
            d0,
            [&](int i) {
              return laid_out(k.load(buffers[i], {zero, zero, zero}, box));
            },
            std::move(carried));
      });
}

/// The forward's launch (programmatic, two blocks an SM) and arguments,
/// declared alike (in the ABI's order) by both kernels: (T, hc, D) tensors, v
/// (T, D) as (T, hc, D) with head stride 0 and the weight (hc, D) with token
/// stride 0 (views that repeat rows), the saved values (T, hc, 1); or, on rows
/// (`rows`), (T, hc D) rows, v as it is, the weight as (T, hc D) with token
/// stride 0, the saved values (T, hc).
struct FwdArgs {
  dsl::Tensor x, k, v, w, out;
  std::optional<dsl::Tensor> image;
  std::vector<dsl::Tensor> saved; ///< dot, gate_score, rstd_x, rstd_k
  dsl::Value eps, clamp;
};

FwdArgs declare_fwd(dsl::KernelBuilder &k, const EngramGateFwdSpec &s) {
  k.programmatic_launch();
  // Two blocks an SM (at most 64 registers a thread at 512 threads): a
  // block's reductions and gate overlap the other's loads.
  k.min_blocks_per_sm(2);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int rank = s.rows ? 2 : 3;
  FwdArgs a;
  a.x = k.tensor("hidden_states", bf16, rank, access);
  a.k = k.tensor("k", bf16, rank, access);
  a.v = s.rows ? k.tensor("v", bf16, 2, access)
               : k.tensor("v_rows", bf16, 3, dsl::repeating(access));
  a.w = k.tensor("weight_rows", f32, rank, dsl::repeating(access));
  a.out = k.tensor("out", bf16, rank, access);
  if (s.image)
    a.image = k.tensor("image_token_mask", DType::u8, 1);
  if (s.save)
    for (const char *name : {"dot", "gate_score", "rstd_x", "rstd_k"})
      a.saved.push_back(k.tensor(name, f32, rank));
  a.eps = k.scalar("eps", f32);
  a.clamp = k.scalar("clamp_value", f32);
  return a;
}

/// The forward's gate from the dot and the rstds: g = sigmoid(copysign(
/// sqrt(max(|z|, clamp)), z)), z = P rstd_x rstd_k / sqrt(D) (a NaN score:
/// a NaN gate).
dsl::Value gate_of(dsl::KernelBuilder &k, const EngramGateFwdSpec &s,
                   dsl::Value dot, dsl::Value rstd_x, dsl::Value rstd_k,
                   dsl::Value clamp) {
  // 1 / sqrt(D) in double, used as f32 (TileKernels' constant).
  auto scale = k.constant(1.0 / std::sqrt(static_cast<double>(s.hidden)), f32);
  auto z = dot * rstd_x * rstd_k * scale;
  auto r = k.sqrt(k.max(k.abs(z), clamp));
  auto zero = k.constant(0, f32);
  r = k.select(k.lt(z, zero), zero - r, r);
  r = k.select(k.ne(z, z), z, r);
  return k.sigmoid(r);
}

Kernel fwd_chunks_kernel(const EngramGateFwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_fwd", s.threads);
  const auto [x, kk, v, w, out, image, saved, eps, clamp] = declare_fwd(k, s);
  const int64_t heads = std::bit_ceil(static_cast<uint32_t>(s.heads));
  const int64_t chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, heads, chunk};
  k.grid({k.blocks(x, 0)});
  auto t = k.block_id(0), zero = k.index(0);
  auto f = [&](Value v) { return k.cast(v, f32); };
  // Pass 1: per-thread sums over the chunks.
  Value acc = k.full(box, 0, f32);
  auto sums = chunk_pass(
      k, chunks, s.stages, box, 0,
      {{&x, t, bf16}, {&kk, t, bf16}, {&w, t, f32}}, {acc, acc, acc},
      [&](Value, const ChunkRead &read, std::vector<Value> a) {
        auto xc = f(read(0)), kc = f(read(1));
        Value xx = k.fma(xc, xc, a[0]), kk2 = k.fma(kc, kc, a[1]);
        return std::vector<Value>{xx, kk2, k.fma(xc * read(2), kc, a[2])};
      });
  auto d = k.constant(static_cast<double>(s.hidden), f32);
  auto dot = k.reduce_sum(sums[2], 2); // (1, heads, 1)
  auto rstd_x = k.rsqrt(k.reduce_sum(sums[0], 2) / d + eps);
  auto rstd_k = k.rsqrt(k.reduce_sum(sums[1], 2) / d + eps);
  auto g = gate_of(k, s, dot, rstd_x, rstd_k, clamp);
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
  // (In place too: a chunk is read before its output is stored.)
  chunk_pass(k, chunks, s.stages, box, 0, {{&x, t, bf16}, {&v, t, bf16}}, {},
             [&](Value d0, const ChunkRead &read, std::vector<Value>) {
               Value xc = read(0), xf = f(xc);
               Value o = k.cast(k.fma(gate, f(read(1)), xf), bf16);
               if (is_image)
                 o = k.select(*is_image, xc, o);
               k.store(o, out, {t, zero, d0});
               return std::vector<Value>{};
             });
  return k.build();
}

// The forward on (T, hc D) rows (`rows`), read as the backward's
// registers kernel reads them (below): 2 columns of every head a thread
// (chunk = 2 threads), v once a column, the heads' and chunks' offsets
// immediates. Pass 1 loops over the chunks (a chunk's 12 loads in flight a
// thread); pass 2's chunks are unrolled while the kernel is built; a block
// sum a head and sum.
Kernel fwd_rows_kernel(const EngramGateFwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_fwd", s.threads);
  const auto [x, kk, v, w, out, image, saved, eps, clamp] = declare_fwd(k, s);
  const int64_t heads = s.heads, chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, chunk};
  k.grid({k.blocks(x, 0)});
  auto t = k.block_id(0);
  auto f = [&](Value a) { return k.cast(a, f32); };
  auto at = [&](int64_t h, int64_t c) {
    return k.index(h * s.hidden + c * chunk);
  };
  // 2 columns of every head a thread; tiles inside the tensors.
  auto load = [&](const dsl::Tensor &src, int64_t h, int64_t c) {
    return k.relayout(
        k.load(src, {t, at(h, c)}, box, dsl::Bounds::promised_inside), 2);
  };
  std::optional<Value> is_image;
  if (image)
    is_image = k.ne(k.load_scalar(*image, {t}), k.constant(0, DType::u8));
  // Pass 1: per-thread sums of x^2, k^2 and x * w * k, a head each (a
  // loop: unrolled, its loads spill 64 registers).
  const Value none = k.relayout(k.full(box, 0, f32), 2);
  auto sums = k.serial(
      k.index(0), k.index(chunks), std::vector<Value>(3 * heads, none),
      [&](Value c, std::vector<Value> a) {
        Value c0 = c * k.index(chunk);
        auto tile = [&](const dsl::Tensor &src, int64_t h) {
          return k.relayout(k.load(src, {t, c0 + k.index(h * s.hidden)}, box,
                                   dsl::Bounds::promised_inside),
                            2);
        };
        for (int64_t h = 0; h < heads; ++h) {
          Value xc = f(tile(x, h)), kc = f(tile(kk, h));
          a[3 * h] = k.fma(xc, xc, a[3 * h]);
          a[3 * h + 1] = k.fma(kc, kc, a[3 * h + 1]);
          a[3 * h + 2] = k.fma(xc * tile(w, h), kc, a[3 * h + 2]);
        }
        return a;
      });
  auto d = k.constant(static_cast<double>(s.hidden), f32);
  std::vector<Value> gate(heads);
  for (int64_t h = 0; h < heads; ++h) {
    auto dot = k.reduce_sum(sums[3 * h + 2], 1); // (1, 1)
    auto rstd_x = k.rsqrt(k.reduce_sum(sums[3 * h], 1) / d + eps);
    auto rstd_k = k.rsqrt(k.reduce_sum(sums[3 * h + 1], 1) / d + eps);
    auto g = gate_of(k, s, dot, rstd_x, rstd_k, clamp);
    if (s.save) {
      const Value values[4] = {dot, g, rstd_x, rstd_k};
      for (int i = 0; i < 4; ++i)
        k.store(values[i], saved[i], {t, k.index(h)});
    }
    gate[h] = k.broadcast(g, box);
  }
  // Pass 2: x again (an L1 or L2 hit), v once a column. In place too: each
  // element is read, then written, by one thread.
  for (int64_t c = 0; c < chunks; ++c) {
    Value vc = f(load(v, 0, c));
    for (int64_t h = 0; h < heads; ++h) {
      Value xc = load(x, h, c);
      Value o = k.cast(k.fma(gate[h], vc, f(xc)), bf16);
      if (is_image)
        o = k.select(*is_image, xc, o);
      k.store(o, out, {t, at(h, c)}, dsl::Bounds::promised_inside);
    }
  }
  return k.build();
}

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

/// The backward's launch (programmatic) and arguments, declared alike (in
/// the ABI's order) by both kernels: (T, hc, D) tensors, v (T, D) as (T,
/// hc, D) with head stride 0 and the weight (hc, D) with token stride 0
/// (views that repeat rows), grad_v as (T, 1, D), grad_w_partial (B, hc,
/// D); or, with the row in registers (`registers`), (T, hc D) rows, v and
/// grad_v as they are, the weight as (T, hc D) with token stride 0,
/// grad_w_partial (B, hc D). The saved values are (T, hc) in both.
struct BwdArgs {
  dsl::Tensor go, x, k, v, w;
  std::vector<dsl::Tensor> saved; ///< dot, gate_score, rstd_x, rstd_k
  std::optional<dsl::Tensor> image;
  dsl::Tensor gx, gk, gv, gw;
  dsl::Value clamp;
};

BwdArgs declare_bwd(dsl::KernelBuilder &k, const EngramGateBwdSpec &s) {
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const bool rows = s.registers != 0;
  const int rank = rows ? 2 : 3;
  BwdArgs a;
  a.go = k.tensor("grad_out", bf16, rank, access);
  a.x = k.tensor("hidden_states", bf16, rank, access);
  a.k = k.tensor("k", bf16, rank, access);
  a.v = rows ? k.tensor("v", bf16, 2, access)
             : k.tensor("v_rows", bf16, 3, dsl::repeating(access));
  a.w = k.tensor("weight_rows", f32, rank, dsl::repeating(access));
  for (const char *name : {"dot", "gate_score", "rstd_x", "rstd_k"})
    a.saved.push_back(k.tensor(name, f32, 2));
  if (s.image)
    a.image = k.tensor("image_token_mask", DType::u8, 1);
  a.gx = k.tensor("grad_x", bf16, rank, access);
  a.gk = k.tensor("grad_k", bf16, rank, access);
  a.gv = k.tensor(rows ? "grad_v" : "grad_v_rows", bf16, rank, access);
  a.gw = k.tensor("grad_w_partial", f32, rank, access);
  a.clamp = k.scalar("clamp_value", f32);
  return a;
}

/// The backward's grid, a block a grad_w_partial row, and block b's
/// tokens [begin, end) = [b ceil(T / B), ...) within T.
struct TokenRange {
  dsl::Value block, begin, end;
};

TokenRange token_range(dsl::KernelBuilder &k, const dsl::Tensor &go,
                       const dsl::Tensor &gw) {
  k.grid({k.blocks(gw, 0)});
  auto b = k.block_id(0);
  auto tokens = k.dim(go, 0), blocks = k.dim(gw, 0);
  auto per = (tokens + blocks - k.index(1)) / blocks;
  auto begin = k.min(b * per, tokens);
  return {b, begin, k.min(begin + per, tokens)};
}

/// dL/dP = dL/dg g (1 - g) / 2 sqrt(C / |P|), C = rstd_x rstd_k / sqrt(D)
/// (0 where clamped, at P = 0 and for an image token), and the x and k
/// terms' factors P rstd^2 / D; values of any shapes that meet.
struct GateGrads {
  dsl::Value dldp, ax, ak;
};

GateGrads gate_grads(dsl::KernelBuilder &k, const EngramGateBwdSpec &s,
                     dsl::Value dldg, dsl::Value p, dsl::Value g, dsl::Value rx,
                     dsl::Value rk, dsl::Value clamp,
                     const std::optional<dsl::Value> &is_image) {
  auto d = k.constant(static_cast<double>(s.hidden), f32);
  auto inv_sqrt_d =
      k.constant(1.0 / std::sqrt(static_cast<double>(s.hidden)), f32);
  auto zero = k.constant(0, f32), one = k.constant(1, f32);
  auto cz = rx * rk * inv_sqrt_d, ap = k.abs(p);
  auto dldp = dldg * (g * (one - g)) * k.constant(0.5, f32) * k.sqrt(cz / ap);
  // Clamped (|z| held at the clamp), P = 0, or an image token: 0.
  dldp = k.select(k.lt(ap * cz, clamp), zero, dldp);
  dldp = k.select(k.eq(p, zero), zero, dldp);
  if (is_image)
    dldp = k.select(*is_image, zero, dldp);
  return {dldp, p * rx * rx / d, p * rk * rk / d};
}

Kernel bwd_global_kernel(const EngramGateBwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_bwd", s.threads);
  const auto [go, x, kk, v, w, saved, image, gx, gk, gv, gw, clamp] =
      declare_bwd(k, s);
  const int64_t heads = std::bit_ceil(static_cast<uint32_t>(s.heads));
  const int64_t chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, heads, chunk};
  const auto [b, begin, end] = token_range(k, go, gw);
  auto zero = k.index(0);
  auto f = [&](Value a) { return k.cast(a, f32); };
  // The block's grad_w row: zeros (also where it has no tokens), then each
  // token's terms added in place (L2-resident; each element read and
  // written by one thread, in token order).
  k.serial(zero, k.index(chunks), {}, [&](Value c, std::vector<Value>) {
    k.store(k.full(box, 0, f32), gw, {b, zero, c * k.index(chunk)});
    return std::vector<Value>{};
  });
  k.barrier();
  k.serial(begin, end, {}, [&](Value t, std::vector<Value>) {
    // Pass 1: dL/dg's per-thread partial sums of go * v.
    Value part = chunk_pass(
        k, chunks, s.stages, box, 8, {{&go, t, bf16}, {&v, t, bf16}},
        {k.full(box, 0, f32)},
        [&](Value, const ChunkRead &read, std::vector<Value> a) {
          return std::vector<Value>{k.fma(f(read(0)), f(read(1)), a[0])};
        })[0];
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
    std::optional<Value> is_image;
    if (image)
      is_image = k.ne(k.load_scalar(*image, {t}), k.constant(0, DType::u8));
    const auto [dldp, ax, ak] =
        gate_grads(k, s, dldg, p, g, rx, rk, clamp, is_image);
    // Pass 2: a chunk's gradients, and this token's terms added to the
    // grad_w row's chunk (copied too at stages > 0: its last store, the
    // block's previous token, came before this pass's barriers).
    chunk_pass(k, chunks, s.stages, box, 8,
               {{&go, t, bf16},
                {&x, t, bf16},
                {&kk, t, bf16},
                {&w, t, f32},
                {&gw, b, f32}},
               {}, [&](Value d0, const ChunkRead &read, std::vector<Value>) {
                 Value goc = read(0), gof = f(goc), xc = f(read(1)),
                       kc = f(read(2));
                 Value wc = read(3);
                 Value grad_x = k.cast(gof + dldp * (kc * wc - xc * ax), bf16);
                 Value grad_k = k.cast(dldp * (xc * wc - kc * ak), bf16);
                 Value grad_v = k.cast(k.reduce_sum(gof * g, 1), bf16);
                 if (is_image) { // grad_out bit for bit, and zeros
                   grad_x = k.select(*is_image, goc, grad_x);
                   grad_k = k.select(*is_image, k.full(box, 0, bf16), grad_k);
                   grad_v = k.select(*is_image, k.full({1, 1, chunk}, 0, bf16),
                                     grad_v);
                 }
                 k.store(grad_x, gx, {t, zero, d0});
                 k.store(grad_k, gk, {t, zero, d0});
                 k.store(grad_v, gv, {t, zero, d0});
                 k.store(k.fma(dldp * xc, kc, read(4)), gw, {b, zero, d0});
                 return std::vector<Value>{};
               });
    return std::vector<Value>{};
  });
  return k.build();
}

// The backward with each persistent block's grad_w row in registers
// (`registers` = N columns a thread, where hc D / threads <= 32 N floats;
// 1.26 ms against 1.67 for the row in L2 at stages 2, 8001x4x7168 on the
// H200). A token's tensors are (T, hc D) rows, the heads side by side
// (head stride D, which the host checks), so every tile is (1, chunk) at a
// column known while the kernel is built: one address a tensor and token,
// the heads' and chunks' offsets immediates (as (1, hc, chunk) tiles, an
// address a head and tensor: 255 registers and spills). A thread holds the
// same N columns of every head (chunk = N threads), so grad_v's sum over
// the heads stays in the thread, v is read once a column, and the block's
// grad_w row is hc D / chunk carried tiles, stored once after its last
// token. Per token: dL/dg's per-thread sums over the chunks (a loop), one
// block sum a head, the heads' scalars, then the chunks unrolled while the
// kernel is built (each head and chunk's accumulator is its own value),
// their loads straight from global memory: a chunk's, every head's, and at
// `stages` 1 the next chunk's, before the chunk's stores.

Kernel bwd_registers_kernel(const EngramGateBwdSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("engram_gate_bwd", s.threads);
  const auto [go, x, kk, v, w, saved, image, gx, gk, gv, gw, clamp] =
      declare_bwd(k, s);
  const int64_t heads = s.heads, chunk = s.chunk, chunks = s.hidden / s.chunk;
  const std::vector<int64_t> box = {1, chunk};
  const auto [b, begin, end] = token_range(k, go, gw);
  auto zero = k.index(0);
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
  const Value none = mine(k.full(box, 0, f32));
  auto rows = k.serial(
      begin, end, std::vector<Value>(heads * chunks, none),
      [&](Value t, std::vector<Value> acc) {
        // The token's saved scalars first: their loads (a branch each, for
        // the bounds) then wait behind pass 1's, not one after another.
        std::optional<Value> is_image;
        if (image)
          is_image = k.ne(k.load_scalar(*image, {t}), k.constant(0, DType::u8));
        std::vector<std::array<Value, 4>> scalars(heads);
        for (int64_t h = 0; h < heads; ++h)
          for (int i = 0; i < 4; ++i)
            scalars[h][i] = k.load_scalar(saved[i], {t, k.index(h)});
        // dL/dg's per-thread sums of go * v, a head each (unrolled: every
        // chunk's loads may be in flight at once).
        std::vector<Value> parts(heads, none);
        for (int64_t c = 0; c < chunks; ++c) {
          Value vc = f(load(v, t, at(0, c)));
          for (int64_t h = 0; h < heads; ++h)
            parts[h] = k.fma(f(load(go, t, at(h, c))), vc, parts[h]);
        }
        // The heads' values, broadcast to the chunk's tile.
        std::vector<Value> dldp(heads), ax(heads), ak(heads), g(heads);
        for (int64_t h = 0; h < heads; ++h) {
          const auto &[p, gh, rx, rk] = scalars[h];
          g[h] = gh;
          GateGrads gg = gate_grads(k, s, k.reduce_sum(parts[h], 1), p, gh, rx,
                                    rk, clamp, is_image);
          dldp[h] = k.broadcast(gg.dldp, box);
          ax[h] = gg.ax;
          ak[h] = gg.ak;
        }
        // A chunk's loads, every head's, issued before any of its stores
        // (and `stages` chunks' more: the stores may alias the loads as far
        // as the compiler knows, so loads after a store wait for it).
        struct Columns {
          Value col, go, gof, x, k, w;
        };
        auto chunk_loads = [&](int64_t c) {
          std::vector<Columns> in(heads);
          for (int64_t h = 0; h < heads; ++h) {
            Value col = at(h, c), goc = load(go, t, col);
            in[h] = {col,
                     goc,
                     f(goc),
                     f(load(x, t, col)),
                     f(load(kk, t, col)),
                     load(w, t, col)};
          }
          return in;
        };
        std::deque<std::vector<Columns>> loaded;
        int64_t next = 0;
        for (int64_t c = 0; c < chunks; ++c) {
          while (next < chunks && next <= c + s.stages)
            loaded.push_back(chunk_loads(next++));
          const std::vector<Columns> in = std::move(loaded.front());
          loaded.pop_front();
          Value grad_v = none;
          for (int64_t h = 0; h < heads; ++h) {
            const auto &[col, goc, gof, xc, kc, wc] = in[h];
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

} // namespace

// Each op's kernel for its spec.
Kernel engram_gate_fwd_kernel(const EngramGateFwdSpec &s) {
  return s.rows ? fwd_rows_kernel(s) : fwd_chunks_kernel(s);
}

Kernel engram_gate_bwd_kernel(const EngramGateBwdSpec &s) {
  return s.registers ? bwd_registers_kernel(s) : bwd_global_kernel(s);
}

} // namespace tilejit::engram
