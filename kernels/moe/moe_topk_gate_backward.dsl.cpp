// moe_topk_gate_backward.dsl.cpp - moe_topk_gate_backward in the tile
// DSL: a token a warp (as the forward's), the K picks a lane each (their
// scores, the sums D and dot, each pick's share of the gradient), then
// the experts a row of about 8 a thread: each adds the shares of the
// picks that name it (duplicates accumulate in slot order), the auxiliary
// term where asked, times du/dx of the sqrt-softplus from the score.
#include "moe/moe_topk_gate_backward.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <bit>
#include <optional>

namespace tilejit::moe {

namespace {

/// du/dx of u = sqrt(softplus(x)), from u (TileKernels' polynomial below
/// u^2 = 1, else (1 - e^-u^2) / (2u)); 0 at u = 0.
dsl::Value dudx(dsl::KernelBuilder &k, dsl::Value u) {
  const auto f32 = DType::f32;
  auto c = [&](double v) { return k.constant(v, f32); };
  auto q2 = u * u, half = u * c(0.5);
  dsl::Value poly = c(0.000129130945);
  for (double coefficient :
       {-0.00130112655, 0.00827621203, -0.041647464, 0.166663632, -0.499999821})
    poly = poly * q2 + c(coefficient);
  auto small = q2 * poly * half + half;
  auto large = c(0.5) * ((c(1) - k.exp(c(0) - q2)) / u);
  return k.select(k.lt(q2, c(1)), small, large);
}

} // namespace

Kernel moe_topk_gate_backward_kernel(const MoeTopkGateBackwardSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("moe_topk_gate_backward", s.threads);
  // Launched while the kernel before it on the stream finishes.
  k.programmatic_launch();
  const auto f32 = DType::f32, i32 = DType::i32, i64 = DType::i64;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto scores = k.tensor("scores", f32, 2, access);
  auto topk_idx = k.tensor("topk_idx", i64, 2);
  auto topk_weights = k.tensor("topk_weights", f32, 2);
  auto grad_topk_weights = k.tensor("grad_topk_weights", f32, 2);
  std::optional<dsl::Tensor> mask, grad_sum;
  if (s.aux) {
    mask = k.tensor("mask", DType::u8, 1);
    grad_sum = k.tensor("grad_scores_sum", f32, 2);
  }
  auto grad = k.tensor("grad_logits", f32, 2, access);
  auto scale = k.scalar("routed_scaling_factor", f32);

  const int64_t bt = s.block_t, experts = s.num_experts;
  const int64_t width = std::bit_ceil(static_cast<uint64_t>(experts));
  k.grid({k.blocks(scores, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  auto f = [&](double v) { return k.constant(v, f32); };

  // A lane a slot: the picks (-1 where unused or past K), their scores
  // and gradients; D and dot over the lanes of a row; each pick's share.
  // A row's lanes: the picks' power of two, at least 32 over the block.
  const int64_t lanes = std::max<int64_t>(
      std::bit_ceil(static_cast<uint64_t>(s.num_topk)), 32 / bt);
  auto slot = k.relayout(k.iota({bt, lanes}, 1), 1);
  auto token =
      k.cast(t0, i64) + k.cast(k.relayout(k.iota({bt, lanes}, 0), 1), i64);
  auto picked = k.load_at(topk_idx, {token, slot});
  auto valid = k.bit_and(k.lt(slot, k.constant(s.num_topk, i32)),
                         k.bit_and(k.ge(picked, k.constant(0, i64)),
                                   k.lt(picked, k.constant(experts, i64))));
  auto expert = k.select(valid, k.cast(picked, i32), k.constant(-1, i32));
  auto u_k = k.select(valid, k.load_at(scores, {token, expert}), f(0));
  auto g_k = k.select(valid, k.load_at(grad_topk_weights, {token, slot}), f(0));
  auto gw = k.select(valid, g_k * k.load_at(topk_weights, {token, slot}), f(0));
  auto d = k.reduce_sum(u_k, 1), dot = k.reduce_sum(gw, 1);
  auto share = k.select(valid, (scale * g_k - dot) / (d + f(1e-20)), f(0));

  // The experts of a row, about 8 a thread (as the forward's).
  const int vector = static_cast<int>(std::min<int64_t>(8, bt * width / 32));
  auto u = k.relayout(k.load(scores, {t0, zero}, {bt, width}), vector);
  auto col = k.relayout(k.iota({bt, width}, 1), vector);
  Value route = k.full({bt, width}, 0, f32);
  for (int j = 0; j < s.num_topk; ++j) {
    auto at = k.constant(j, i32);
    route = route + k.select(k.eq(col, k.take(expert, 1, at)),
                             k.take(share, 1, at), f(0));
  }
  if (s.aux) { // the sequence's grad_scores_sum row, against sum(u)
    auto row_token = k.cast(t0, i64) +
                     k.cast(k.relayout(k.iota({bt, width}, 0), vector), i64);
    auto per_sequence =
        k.cast(k.dim(scores, 0), i64) / k.cast(k.dim(*grad_sum, 0), i64);
    auto h = k.load_at(*grad_sum, {row_token / per_sequence, col});
    auto su = k.reduce_sum(u, 1), hu = k.reduce_sum(h * u, 1);
    auto routed = k.ne(k.load_at(*mask, {row_token}), k.constant(0, DType::u8));
    auto inv = k.select(routed, f(1) / su, f(0));
    route = route + (h - hu * inv) * inv;
  }
  k.store(dudx(k, u) * route, grad, {t0, zero});
  return k.build();
}

} // namespace tilejit::moe
