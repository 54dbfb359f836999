// swiglu_backward.dsl.cpp - TileKernels 2.1's plain SwiGLU backward in the
// tile DSL. A block takes one row in chunks of threads x vector columns of
// each half: clamps (remembering where), computes s = 1 / (1 + exp(-l)),
// the gradients of l and r, and where weights or act_out need it the
// activation (silu by one Newton step from l * s); stores x_grad (and
// act_out), and sums g * act in registers across the chunks; after the
// last one the row's sum times rsf goes to weight_grad. Every output of a
// psum padding row is 0. TileKernels 2.1's FP8 form
// (swiglu_backward_and_per_token_cast) dequantizes an e4m3 x with its
// scales (loaded one a thread) and also casts each half's f32 gradient per
// group to e4m3, with scales (0 on padding rows) in §3.3's layouts.
#include "quant/swiglu_backward.h"
#include "quant/psum_dsl.h"
#include "quant/scale_dsl.h"

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
  std::optional<dsl::Tensor> x_sf, fp8_l, fp8_r, x_grad_sf;
  // x_sf (T, 2H / bk, bk / vector): each scale repeated for the threads that
  // hold its group.
  if (s.x_group)
    x_sf = k.tensor("x_sf_rep", f32, 3);
  auto g_in = k.tensor("act_x_grad", s.grad_dtype, 2, access);
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
  // Packed scales are bytes (T, words, 4) of the int32 tensor.
  const bool packed = s.sf_layout == SfLayout::packed_ue8m0;
  if (s.cast_group) {
    fp8_l = k.tensor("x_grad_fp8_l", DType::e4m3, 2, access);
    fp8_r = k.tensor("x_grad_fp8_r", DType::e4m3, 2, access);
    x_grad_sf = k.tensor("x_grad_sf", packed ? DType::u8 : f32, packed ? 3 : 2);
  }
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

  auto h = k.dim(l_in, 1);
  // A half's chunk at c0 (its column in x: x0), dequantized with x's scales
  // where it is e4m3: one a thread, broadcast over the thread's vector.
  auto half = [&](const dsl::Tensor &t, dsl::Value c0, dsl::Value x0) {
    auto v = k.cast(k.load(t, {b, c0}, tile, inside), f32);
    if (!x_sf)
      return v;
    const int64_t n = chunk / s.x_group;
    auto sf = k.relayout(k.load(*x_sf, {b, x0 / k.index(s.x_group), zero},
                                {1, n, s.x_group / s.vector}),
                         1);
    auto by_thread =
        k.broadcast(k.reshape(sf, {1, threads, 1}), {1, threads, s.vector});
    return v * k.reshape(by_thread, tile);
  };
  // The e4m3 cast of a half's f32 gradient `d` at c0 (x0 in x), groups of
  // cast_group: data and scales; a padding row's scales are 0.
  auto cast = [&](dsl::Value d, const dsl::Tensor &out, dsl::Value c0,
                  dsl::Value x0) {
    const int64_t g = s.cast_group, n = chunk / g;
    const std::vector<int64_t> shape = {1, n, g}, scale_shape = {1, n, 1};
    auto groups = k.reshape(d, shape);
    // A padding row's groups reduce to -1 (its values are 0): its scales
    // are then 0 in the reductions' own layout, a broadcast of the row's
    // flag over (1, n) would be fewer elements than threads.
    std::optional<dsl::Value> absmax;
    if (padding)
      absmax = k.reduce_max(k.select(k.reshape(*padding, shape),
                                     k.full(shape, -1, f32), k.abs(groups)),
                            2);
    else
      absmax = k.reduce_absmax(groups, 2);
    auto sc = scales_of(k, *absmax, kE4m3Limits, s.round_sf);
    k.store(k.cast(k.reshape(groups * sc.sf_inv, tile), DType::e4m3), out,
            {b, c0}, inside);
    auto sf = packed ? k.cast(sc.biased, DType::u8) : sc.sf;
    if (padding)
      sf = k.select(k.lt(*absmax, k.full(scale_shape, 0, f32)),
                    k.full(scale_shape, 0, packed ? DType::u8 : f32), sf);
    store_scales(k, sf, *x_grad_sf, b, x0 / k.index(g), 1, n, packed);
  };

  auto body = [&](dsl::Value i, std::vector<dsl::Value> carried) {
    auto c0 = i * k.index(chunk);
    auto l = half(l_in, c0, c0);
    auto r = half(r_in, c0, h + c0);
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
    dl = unless_padding(dl);
    dr = unless_padding(dr);
    k.store(k.cast(dl, s.out_dtype), dl_out, {b, c0}, inside);
    k.store(k.cast(dr, s.out_dtype), dr_out, {b, c0}, inside);
    if (s.cast_group) {
      cast(dl, *fp8_l, c0, c0);
      cast(dr, *fp8_r, c0, h + c0);
    }
    if (act_out)
      k.store(k.cast(unless_padding(w ? *act * *w : *act), s.out_dtype),
              *act_out, {b, c0}, inside);
    if (!w)
      return std::vector<dsl::Value>{};
    return std::vector<dsl::Value>{carried[0] + g * *act};
  };
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
