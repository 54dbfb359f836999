// swiglu_forward.dsl.cpp - TileKernels 2.1's plain SwiGLU forward in the
// tile DSL: a block takes block_m rows, decides once which of them the psum
// layout makes valid and loads their weights, then in chunks of columns
// loads the gate and value halves, clamps (counting the clamps and the
// valid elements in registers), computes a = l / (1 + exp(-l)) * r in f32,
// weights it, and stores the valid rows; after the last chunk it adds its
// counts (two an i32 in 16-bit halves where they fit).
#include "quant/swiglu_forward.h"
#include "quant/psum_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <numeric>
#include <optional>

namespace tilejit::quant {

Kernel swiglu_forward_kernel(const SwigluForwardSpec &s) {
  dsl::KernelBuilder k("swiglu_forward", s.threads);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bm = s.block_m, cw = s.columns(), threads = s.threads;
  const std::vector<int64_t> tile = {bm, cw};
  const auto i32 = DType::i32, f32 = DType::f32;
  auto gate = k.tensor("gate", s.in_dtype, 2, access);
  auto up = k.tensor("up", s.in_dtype, 2, access);
  std::optional<dsl::Tensor> psum, weights, counts;
  if (s.psum)
    psum = k.tensor("psum_rows", i32, 2);
  std::optional<dsl::Value> rsf, clamp;
  if (s.weights) {
    weights = k.tensor("weight_rows", f32, 2);
    rsf = k.scalar("routed_scaling_factor", f32);
  }
  if (s.clamp)
    clamp = k.scalar("clamp_value", f32);
  auto out = k.tensor("out", s.out_dtype, 2, access);
  if (s.count)
    counts = k.tensor("counts", DType::i64, 2);
  k.grid({k.blocks(gate, 0, bm)});
  auto zero = k.index(0);
  auto r0 = k.block_id(0) * k.index(bm);

  // Once a block: which of its rows are valid (the psum layout's, or
  // inside x; needed to count, and to store with psum), and their weights.
  auto none = k.full(tile, 0, i32);
  std::optional<dsl::Value> valid;
  if (psum)
    valid = k.gt(k.broadcast(psum_valid(k, *psum, k.dim(gate, 0), r0, bm,
                                        s.experts, s.alignment),
                             tile),
                 none);
  else if (counts)
    valid =
        k.lt(k.iota(tile, 0) + k.cast(r0, i32), k.cast(k.dim(gate, 0), i32));
  std::optional<dsl::Value> w;
  if (weights) {
    // topk_weights as (T, copies), stride 0: one a thread, a maximum over
    // the copies gives each row its weight.
    const int64_t copies = threads / std::gcd<int64_t>(bm, threads);
    w = k.broadcast(
        k.reduce_max(k.relayout(k.load(*weights, {r0, zero}, {bm, copies}), 1),
                     1) *
            *rsf,
        tile);
  }

  // The counts a chunk adds, per element: packed, (l > c) + (r > c) << 16
  // and (r < -c) + valid << 16 (each half at most block_m x H < 2^16 over
  // the block); else the four apart.
  auto counted = [&](dsl::Value l, dsl::Value r, dsl::Value c,
                     dsl::Value minus_c) {
    auto n = [&](dsl::Value hit, int64_t weight) {
      return k.select(*valid, k.select(hit, k.full(tile, weight, i32), none),
                      none);
    };
    auto is_valid = n(*valid, 1);
    if (s.pack)
      return std::vector<dsl::Value>{n(k.gt(l, c), 1) + n(k.gt(r, c), 1 << 16),
                                     n(k.lt(r, minus_c), 1) +
                                         (is_valid << k.full(tile, 16, i32))};
    return std::vector<dsl::Value>{n(k.gt(l, c), 1), n(k.gt(r, c), 1),
                                   n(k.lt(r, minus_c), 1), is_valid};
  };
  auto body = [&](dsl::Value i, std::vector<dsl::Value> carried) {
    auto c0 = i * k.index(cw);
    auto l = k.cast(k.load(gate, {r0, c0}, tile), f32);
    auto r = k.cast(k.load(up, {r0, c0}, tile), f32);
    if (clamp) {
      auto c = *clamp, minus_c = k.constant(0, f32) - *clamp;
      if (counts) {
        std::vector<dsl::Value> add = counted(l, r, c, minus_c);
        for (size_t j = 0; j < carried.size(); ++j)
          carried[j] = carried[j] + add[j];
      }
      l = k.min(l, c);
      r = k.max(k.min(r, c), minus_c);
    }
    auto t = k.constant(1, f32) + k.exp(k.constant(0, f32) - l);
    auto a = (l / t) * r;
    if (w)
      a = a * *w;
    auto stored = k.cast(a, s.out_dtype);
    if (psum)
      k.store_where(*valid, stored, out, {r0, c0});
    else
      k.store(stored, out, {r0, c0});
    return carried;
  };
  std::vector<dsl::Value> init;
  if (counts && clamp)
    init.assign(s.pack ? 2 : 4, none);
  auto sums = k.serial(zero, k.dim(gate, 1) / k.index(cw), init, body);
  if (init.empty())
    return k.build();
  // The block's counts, added once each.
  auto total = [&](dsl::Value v) {
    return k.reduce_sum(k.reduce_sum(v, 1), 0);
  };
  auto add = [&](dsl::Value count, int64_t j) {
    k.atomic_add(k.reshape(k.cast(count, DType::i64), {1, 1}), *counts,
                 {k.index(j), zero});
  };
  if (!s.pack) {
    for (size_t j = 0; j < sums.size(); ++j)
      add(total(sums[j]), static_cast<int64_t>(j));
    return k.build();
  }
  auto low = k.constant(0xffff, i32), sixteen = k.constant(16, i32);
  for (int64_t j : {0, 1}) {
    auto both = total(sums[static_cast<size_t>(j)]);
    add(k.bit_and(both, low), 2 * j);
    add(k.bit_and(k.shr(both, sixteen), low), 2 * j + 1);
  }
  return k.build();
}

} // namespace tilejit::quant
