// swiglu_forward.dsl.cpp - TileKernels 2.1's plain SwiGLU forward in the
// tile DSL: a block loads a tile of the gate and value halves, decides which
// of its rows the psum layout makes valid, clamps (counting the clamps and
// the valid elements, two counters an i32 in 16-bit halves), computes a =
// l / (1 + exp(-l)) * r in f32, weights it, and stores the valid rows.
#include "quant/swiglu_forward.h"
#include "quant/psum_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <numeric>
#include <optional>

namespace tilejit::quant {

Kernel swiglu_forward_kernel(const SwigluForwardSpec &s) {
  dsl::KernelBuilder k("swiglu_forward", s.threads);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bm = s.block_m, bk = s.block_k, threads = s.threads;
  const std::vector<int64_t> tile = {bm, bk};
  auto gate = k.tensor("gate", s.in_dtype, 2, access);
  auto up = k.tensor("up", s.in_dtype, 2, access);
  std::optional<dsl::Tensor> psum, weights, counts;
  if (s.psum)
    psum = k.tensor("psum_rows", DType::i32, 2);
  std::optional<dsl::Value> rsf, clamp;
  if (s.weights) {
    weights = k.tensor("weight_rows", DType::f32, 2);
    rsf = k.scalar("routed_scaling_factor", DType::f32);
  }
  if (s.clamp)
    clamp = k.scalar("clamp_value", DType::f32);
  auto out = k.tensor("out", s.out_dtype, 2, access);
  if (s.count)
    counts = k.tensor("counts", DType::i64, 2);
  k.grid({k.blocks(gate, 0, bm), k.blocks(gate, 1, bk)});
  auto zero = k.index(0);
  auto r0 = k.block_id(0) * k.index(bm), c0 = k.block_id(1) * k.index(bk);

  // 1 where an element's row is valid (the psum layout's, or inside x),
  // else 0; needed to count, and to store with psum.
  std::optional<dsl::Value> valid;
  if (psum)
    valid = k.broadcast(
        psum_valid(k, *psum, k.dim(gate, 0), r0, bm, s.experts, s.alignment),
        tile);
  else if (counts)
    valid = k.select(k.lt(k.iota(tile, 0) + k.cast(r0, DType::i32),
                          k.cast(k.dim(gate, 0), DType::i32)),
                     k.full(tile, 1, DType::i32), k.full(tile, 0, DType::i32));
  auto f32 = [&](dsl::Value v) { return k.cast(v, DType::f32); };
  auto l = f32(k.load(gate, {r0, c0}, tile));
  auto r = f32(k.load(up, {r0, c0}, tile));
  if (clamp) {
    auto c = *clamp, minus_c = k.constant(0, DType::f32) - *clamp;
    if (counts) {
      // (l > c) + (r > c) << 16 and (r < -c) + valid << 16 over the valid
      // rows: a tile holds fewer than 2^16 elements, so no half carries.
      auto none = k.full(tile, 0, DType::i32);
      auto n = [&](dsl::Value hit, int64_t weight) {
        return k.select(hit, k.full(tile, weight, DType::i32), none);
      };
      auto in_valid = [&](dsl::Value v) {
        return k.select(k.gt(*valid, none), v, none);
      };
      auto total = [&](dsl::Value v) {
        return k.reduce_sum(k.reduce_sum(v, 1), 0);
      };
      auto low = k.constant(0xffff, DType::i32);
      auto add = [&](dsl::Value both, int64_t first) {
        auto halves = {k.bit_and(both, low),
                       k.bit_and(k.shr(both, k.constant(16, DType::i32)), low)};
        int64_t j = first;
        for (dsl::Value h : halves)
          k.atomic_add(k.reshape(k.cast(h, DType::i64), {1, 1}), *counts,
                       {k.index(j++), zero});
      };
      add(total(in_valid(n(k.gt(l, c), 1) + n(k.gt(r, c), 1 << 16))), 0);
      add(total(in_valid(n(k.lt(r, minus_c), 1) +
                         (*valid << k.full(tile, 16, DType::i32)))),
          2);
    }
    l = k.min(l, c);
    r = k.max(k.min(r, c), minus_c);
  }
  auto t = k.constant(1, DType::f32) + k.exp(k.constant(0, DType::f32) - l);
  auto a = (l / t) * r;
  if (weights) {
    // topk_weights as (T, copies), stride 0: one a thread, a maximum over
    // the copies gives each row its weight.
    const int64_t copies = threads / std::gcd<int64_t>(bm, threads);
    auto w = k.reduce_max(
        k.relayout(k.load(*weights, {r0, zero}, {bm, copies}), 1), 1);
    a = a * k.broadcast(w * *rsf, tile);
  }
  auto stored = k.cast(a, s.out_dtype);
  if (psum)
    k.store_where(k.gt(*valid, k.full(tile, 0, DType::i32)), stored, out,
                  {r0, c0});
  else
    k.store(stored, out, {r0, c0});
  return k.build();
}

} // namespace tilejit::quant
