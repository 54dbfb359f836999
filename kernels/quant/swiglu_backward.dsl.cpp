// swiglu_backward.dsl.cpp - TileKernels 2.1's plain SwiGLU backward in the
// tile DSL. A block takes one row in chunks of threads x vector columns of
// each half: clamps (remembering where), computes s = 1 / (1 + exp(-l)),
// the gradients of l and r, and where weights or act_out need it the
// activation (silu by one Newton step from l * s); stores x_grad (and
// act_out), and sums g * act in registers across the chunks; after the
// last one the row's sum times rsf goes to weight_grad. Every output of a
// psum padding row is 0.
#include "quant/swiglu_backward.h"
#include "quant/psum_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <cfloat>
#include <optional>

namespace tilejit::quant {

Kernel swiglu_backward_kernel(const SwigluBackwardSpec &s) {
  dsl::KernelBuilder k("swiglu_backward", s.threads);
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t threads = s.threads, chunk = s.chunk();
  const std::vector<int64_t> tile = {1, chunk};
  const auto f32 = DType::f32, i32 = DType::i32;
  auto l_in = k.tensor("gate", s.in_dtype, 2, access);
  auto r_in = k.tensor("up", s.in_dtype, 2, access);
  auto g_in = k.tensor("act_x_grad", s.in_dtype, 2, access);
  std::optional<dsl::Tensor> psum, weights, weight_grad, act_out;
  if (s.psum)
    psum = k.tensor("psum_rows", i32, 2);
  std::optional<dsl::Value> rsf, clamp;
  if (s.weights) {
    weights = k.tensor("weight_rows", f32, 2);
    rsf = k.scalar("routed_scaling_factor", f32);
  }
  if (s.clamp)
    clamp = k.scalar("clamp_value", f32);
  auto dl_out = k.tensor("x_grad_l", s.out_dtype, 2, access);
  auto dr_out = k.tensor("x_grad_r", s.out_dtype, 2, access);
  if (s.weights)
    weight_grad = k.tensor("weight_grad_rows", f32, 2);
  if (s.recompute)
    act_out = k.tensor("act_out", s.out_dtype, 2, access);
  k.grid({k.blocks(l_in, 0)});

  auto zero = k.index(0);
  auto b = k.block_id(0);
  auto full = [&](double value) { return k.full(tile, value, f32); };
  auto neg = [&](dsl::Value v) { return v * full(-1); }; // exact
  const auto inside = dsl::Bounds::promised_inside;

  // Whether the row is padding: a (1,) i32 and the tile's i1.
  std::optional<dsl::Value> padding_row, padding;
  if (psum) {
    padding_row = psum_padding(k, *psum, b, 1, s.experts, s.alignment);
    padding = k.gt(k.broadcast(*padding_row, tile), k.full(tile, 0, i32));
  }
  auto unless_padding = [&](dsl::Value v) {
    return padding ? k.select(*padding, full(0), v) : v;
  };
  // The row's weight times rsf, one a thread, broadcast over the tile.
  std::optional<dsl::Value> w;
  if (weights)
    w = k.broadcast(
        k.reduce_max(k.relayout(k.load(*weights, {b, zero}, {1, threads}), 1),
                     1) *
            *rsf,
        tile);

  auto body = [&](dsl::Value i, std::vector<dsl::Value> carried) {
    auto c0 = i * k.index(chunk);
    auto l = k.cast(k.load(l_in, {b, c0}, tile, inside), f32);
    auto r = k.cast(k.load(r_in, {b, c0}, tile, inside), f32);
    // Where a value was clamped its gradient is 0 (flags before clamping).
    std::optional<dsl::Value> l_high, r_high, r_low;
    if (clamp) {
      auto c = full(0) + *clamp, minus_c = full(0) - *clamp;
      l_high = k.gt(l, c);
      r_high = k.gt(r, c);
      r_low = k.lt(r, minus_c);
      l = k.min(l, c);
      r = k.max(k.min(r, c), minus_c);
    }
    auto g = k.cast(k.load(g_in, {b, c0}, tile, inside), f32);
    auto one = full(1);
    auto den = one + k.exp(neg(l));
    auto sg = one / den;
    std::optional<dsl::Value> act;
    if (w || act_out) {
      // l / den as the kernel computes it: l * s and one Newton step.
      auto e0 = l * sg;
      auto residual = k.fma(e0, k.min(den, full(FLT_MAX)), neg(l));
      act = k.fma(neg(residual), sg, e0) * r;
    }
    auto gs = w ? (g * *w) * sg : g * sg;
    auto dl = (gs * r) * k.fma(l, one - sg, one);
    auto dr = gs * l;
    if (clamp) {
      dl = k.select(*l_high, full(0), dl);
      dr = k.select(*r_high, full(0), k.select(*r_low, full(0), dr));
    }
    k.store(k.cast(unless_padding(dl), s.out_dtype), dl_out, {b, c0}, inside);
    k.store(k.cast(unless_padding(dr), s.out_dtype), dr_out, {b, c0}, inside);
    if (act_out)
      k.store(k.cast(unless_padding(w ? *act * *w : *act), s.out_dtype),
              *act_out, {b, c0}, inside);
    if (!w)
      return std::vector<dsl::Value>{};
    return std::vector<dsl::Value>{carried[0] + g * *act};
  };
  auto h = k.dim(l_in, 1);
  std::vector<dsl::Value> init;
  if (w)
    init.push_back(full(0));
  auto sums = k.serial(zero, h / k.index(chunk), init, body);
  if (weight_grad) {
    // rsf times the row's sum; 0 on a padding row.
    auto total = k.reduce_sum(sums[0], 1) * *rsf;
    if (padding_row)
      total = k.select(k.gt(*padding_row, k.constant(0, i32)),
                       k.constant(0, f32), total);
    k.store(k.reshape(total, {1, 1}), *weight_grad, {b, zero});
  }
  return k.build();
}

} // namespace tilejit::quant
