// swiglu_backward_and_per_token_cast.dsl.cpp - the fused SwiGLU backward in
// the tile DSL. A block takes one row in chunks of threads x vector columns
// of each half (math in (1, threads, vector): thread j holds vector j of a
// chunk when the rows allow vector accesses): dequantizes gate and
// up with their scales (loaded one a thread), clamps, computes the
// activation's gradients, stores out and x_grad, casts each half's
// gradient per group of num_per_channels to e4m3, and sums go * act in
// registers across the chunks; after the last one the row's sum goes to
// weight_grad at the row's index (a scatter). Every block also zeroes its
// `threads` entries of weight_grad where token_topk_to_pos is -1.
#include "quant/swiglu_backward_and_per_token_cast.h"
#include "quant/scale_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <optional>

namespace tilejit::quant {

Kernel
swiglu_backward_and_per_token_cast_kernel(const SwigluBackwardCastSpec &s) {
  dsl::KernelBuilder k("swiglu_backward_and_per_token_cast", s.threads);
  const dsl::Access access = dsl::vectors_of(s.aligned ? 16 : 0);
  const int64_t threads = s.threads, v = s.vector, chunk = s.chunk(),
                bk = s.group, n = chunk / bk;
  auto gate = k.tensor("gate", DType::e4m3, 2, access);
  auto up = k.tensor("up", DType::e4m3, 2, access);
  // x_sf (E, 2H / bk, bk / v): each scale repeated for the threads that
  // hold its group.
  auto x_sf = k.tensor("x_sf_rep", DType::f32, 3);
  auto grad_out = k.tensor("grad_out", DType::bf16, 2, access);
  // weight.flat as (T K, threads, 1), stride 0 but along rows.
  auto weight = k.tensor("weight_src", DType::f32, 3);
  auto rows = k.tensor("pos_to_token_topk", DType::i32, 1);
  auto to_pos = k.tensor("to_pos_flat", DType::i32, 2);
  std::optional<dsl::Value> clamp;
  if (s.clamp)
    clamp = k.scalar("swiglu_clamp_value", DType::f32);
  auto out = k.tensor("out", DType::bf16, 2, access);
  auto x_grad_fp8 = k.tensor("x_grad_fp8", DType::e4m3, 2, access);
  auto x_grad_sf = k.tensor("x_grad_sf", DType::f32, 2);
  auto x_grad = k.tensor("x_grad", DType::bf16, 2, access);
  auto weight_grad_rows = k.tensor("weight_grad_rows", DType::f32, 2);
  auto weight_grad_flat = k.tensor("weight_grad_flat", DType::f32, 2);
  // Its size is the grid: max(E, the blocks that zero weight_grad).
  auto blocks = k.tensor("blocks", DType::u8, 1);
  k.grid({k.blocks(blocks, 0)});

  auto zero = k.index(0);
  auto b = k.block_id(0);
  auto f32 = [&](dsl::Value t) { return k.cast(t, DType::f32); };
  auto full = [&](double value) {
    return k.full({1, threads, v}, value, DType::f32);
  };
  const auto inside = dsl::Bounds::promised_inside;

  // weight_grad = 0 where token_topk_to_pos is -1 (one entry a thread).
  auto z0 = b * k.index(threads);
  auto padding = k.eq(k.relayout(k.load(to_pos, {zero, z0}, {1, threads}), 1),
                      k.full({1, threads}, -1, DType::i32));
  k.store_where(padding, k.full({1, threads}, 0, DType::f32), weight_grad_flat,
                {zero, z0});

  auto h = k.dim(gate, 1);
  auto row = [&] {
    // One value a thread, (1, threads, 1), broadcast over its vector.
    auto per_thread = [&](dsl::Value t) {
      return k.broadcast(k.reshape(k.relayout(t, 1), {1, threads, 1}),
                         {1, threads, v});
    };
    auto w =
        per_thread(k.gather(weight, rows, {b, zero, zero}, {1, threads, 1}));
    auto in_math = [&](dsl::Value t) {
      return k.reshape(f32(t), {1, threads, v});
    };
    auto half = [&](const dsl::Tensor &t, dsl::Value c0, dsl::Value first) {
      auto sf = per_thread(k.load(x_sf, {b, first, zero}, {1, n, bk / v}));
      return in_math(k.load(t, {b, c0}, {1, chunk}, inside)) * sf;
    };
    // The (1, bk) e4m3 cast of one half's f32 gradient.
    auto cast = [&](dsl::Value grad, dsl::Value c0, dsl::Value first) {
      auto groups = k.reshape(grad, {1, n, bk});
      auto sc =
          scales_of(k, k.reduce_absmax(groups, 2), kE4m3Limits, s.round_sf);
      k.store(k.cast(k.reshape(groups * sc.sf_inv, {1, chunk}), DType::e4m3),
              x_grad_fp8, {b, c0}, inside);
      k.store(k.reshape(sc.sf, {1, n}), x_grad_sf, {b, first});
      k.store(k.cast(k.reshape(grad, {1, chunk}), DType::bf16), x_grad, {b, c0},
              inside);
    };
    auto body = [&](dsl::Value i, std::vector<dsl::Value> carried) {
      auto c0 = i * k.index(chunk);
      auto first = c0 / k.index(bk);
      auto up0 = h + c0, up_first = up0 / k.index(bk);
      auto g = half(gate, c0, first), u = half(up, c0, up_first);
      // Where a value was clamped its gradient is 0 (NaN is never).
      std::optional<dsl::Value> g_high, u_high, u_low;
      if (clamp) {
        auto c = full(0) + *clamp, minus_c = full(0) - *clamp;
        g_high = k.gt(g, c);
        u_high = k.gt(u, c);
        u_low = k.lt(u, minus_c);
        g = k.select(*g_high, c, g);
        u = k.select(*u_high, c, k.select(*u_low, minus_c, u));
      }
      auto go = in_math(k.load(grad_out, {b, c0}, {1, chunk}, inside));
      // §11.2's order: t = 1 + expf(-g), act = (g / t) * u, s = 1 / t.
      auto one = full(1);
      auto t = one + k.exp(full(0) - g);
      auto act = (g / t) * u;
      auto sg = one / t;
      auto gws = (go * w) * sg;
      auto dg = (gws * u) * k.fma(g, one - sg, one);
      auto du = gws * g;
      if (clamp) {
        dg = k.select(*g_high, full(0), dg);
        du = k.select(*u_high, full(0), k.select(*u_low, full(0), du));
      }
      k.store(k.cast(k.reshape(act * w, {1, chunk}), DType::bf16), out, {b, c0},
              inside);
      cast(dg, c0, first);
      cast(du, up0, up_first);
      return std::vector<dsl::Value>{carried[0] + go * act};
    };
    auto sums = k.serial(zero, h / k.index(chunk), {full(0)}, body);
    auto total = k.reduce_sum(k.reduce_sum(sums[0], 2), 1);
    k.scatter(k.reshape(total, {1, 1}), weight_grad_rows, rows, {b, zero});
  };
  k.when(k.lt(b, k.dim(gate, 0)), row);
  return k.build();
}

} // namespace tilejit::quant
