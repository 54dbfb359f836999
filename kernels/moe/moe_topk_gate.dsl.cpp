// moe_topk_gate.dsl.cpp - moe_topk_gate_forward in the tile DSL: as
// top2_sum_gate's kernel (a token a warp from 256 experts on, K rounds of
// top-k, then a lane a slot), with sqrt-softplus scores (optionally
// written out), the bias or, for image tokens, the image bias, and the
// weights normalised by the warp's xor butterfly at 16, 8, 4, 2, 1 (lanes
// past K adding 0) plus 1e-20; no groups and no TP renumbering.
#include "moe/moe_topk_gate.h"
#include "moe/gate_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>

namespace tilejit::moe {

Kernel moe_topk_gate_kernel(const MoeTopkGateSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("moe_topk_gate_forward", s.threads);
  // Launched while the kernel before it on the stream finishes.
  k.programmatic_launch();
  const auto f32 = DType::f32, i32 = DType::i32, i64 = DType::i64;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto logits = k.tensor("logits", f32, 2, access);
  std::optional<dsl::Tensor> mask, bias, image_bias, image, fix, unmapped, map,
      count, unmapped_out, scores;
  if (s.mask)
    mask = k.tensor("mask", DType::u8, 1);
  // The biases as (T, E) rows of stride 0: the same row for every token.
  if (s.bias)
    bias = k.tensor("bias_rows", f32, 2, access);
  if (s.image) {
    image_bias = k.tensor("image_bias_rows", f32, 2, access);
    image = k.tensor("image_token_mask", DType::u8, 1);
  }
  if (s.fix_routing) {
    fix = k.tensor("fix_routing_mask", DType::u8, 1);
    unmapped = k.tensor("unmapped_topk_idx", i64, 2);
  }
  if (s.physical_map) {
    map = k.tensor("to_physical_map", i32, 2);
    count = k.tensor("logical_count", i32, 1);
  }
  auto topk_idx = k.tensor("topk_idx", i64, 2);
  auto topk_weights = k.tensor("topk_weights", f32, 2);
  if (s.unmapped_out)
    unmapped_out = k.tensor("unmapped_out", i64, 2);
  if (s.scores)
    scores = k.tensor("scores", f32, 2);
  auto scale = k.scalar("routed_scaling_factor", f32);

  const int64_t bt = s.block_t, experts = s.num_experts;
  const int64_t width = std::bit_ceil(static_cast<uint64_t>(experts));
  k.grid({k.blocks(logits, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  auto minus_inf = k.constant(-std::numeric_limits<float>::infinity(), f32);
  auto score = [&](Value v) { return k.sqrt(k.softplus(v)); };
  auto flag = [&](const dsl::Tensor &t, Value token) {
    return k.ne(k.load_at(t, {token}), k.constant(0, DType::u8));
  };
  // Consecutive logits a thread (8, fewer where the block holds fewer than
  // 256), as top2_sum_gate's.
  const int vector = static_cast<int>(std::min<int64_t>(8, bt * width / 32));
  auto tile = [&](const dsl::Tensor &t) {
    return k.relayout(k.load(t, {t0, zero}, {bt, width}), vector);
  };
  auto x = tile(logits);
  auto col = k.iota({bt, width}, 1);
  auto row_token = k.cast(t0, i64) + k.cast(k.iota({bt, width}, 0), i64);
  auto u = score(x);
  Value sel = u;
  if (bias || image_bias) {
    Value b = bias ? tile(*bias) : k.full({bt, width}, 0, f32);
    if (image_bias)
      b = k.select(flag(*image, row_token), tile(*image_bias), b);
    sel = u + b;
  }
  sel = k.select(k.lt(col, k.constant(experts, i32)), sel, minus_inf);
  if (scores) // the unbiased scores; 0 for masked tokens
    k.store(mask ? k.select(flag(*mask, row_token), u, k.constant(0, f32)) : u,
            *scores, {t0, zero});
  const std::vector<Value> picks = top_k_rounds(k, sel, col, s.num_topk);

  // A lane a slot (vector 1), as the original's warp.
  const int64_t lanes = 32, slots = s.num_topk + s.num_shared;
  auto slot = k.relayout(k.iota({bt, lanes}, 1), 1);
  auto token =
      k.cast(t0, i64) + k.cast(k.relayout(k.iota({bt, lanes}, 0), 1), i64);
  auto routed_slot = k.lt(slot, k.constant(s.num_topk, i32));
  auto expert = slots_of(k, picks, slot);
  std::optional<Value> routed;
  if (mask)
    routed = flag(*mask, token);
  if (fix) // a fixed-routing token's picks are its own
    expert = k.select(k.bit_and(flag(*fix, token), routed_slot),
                      k.cast(k.load_at(*unmapped, {token, slot}), i32), expert);
  // Each pick's score again from its logit (the same operations, the same
  // bits); 0 past the picks. The warp's butterfly sum, then 1e-20.
  auto w = k.select(routed_slot, score(k.load_at(logits, {token, expert})),
                    k.constant(0, f32));
  auto sum = w;
  for (int o = 16; o >= 1; o /= 2)
    sum = sum + k.shuffle_xor(sum, 1, o);
  auto weight = w / (sum + k.constant(1e-20, f32)) * scale;
  // Then the shared experts E, E + 1, ... of weight 1 (not scaled).
  auto shared = k.bit_and(k.ge(slot, k.constant(s.num_topk, i32)),
                          k.lt(slot, k.constant(slots, i32)));
  expert =
      k.select(shared, slot + k.constant(experts - s.num_topk, i32), expert);
  weight = k.select(shared, k.constant(1, f32), weight);

  auto minus_one = k.constant(-1, i64);
  auto masked = [&](Value v) {
    return routed ? k.select(*routed, v, minus_one) : v;
  };
  if (unmapped_out) // the picks (slots past K fall outside the tensor)
    k.store(masked(k.cast(expert, i64)), *unmapped_out, {t0, zero});
  if (map)
    expert = physical_expert(k, expert, token, *count, *map,
                             k.scalar("ep_rank", i64));
  if (routed)
    weight = k.select(*routed, weight, k.constant(0, f32));
  k.store(masked(k.cast(expert, i64)), topk_idx, {t0, zero});
  k.store(weight, topk_weights, {t0, zero});
  return k.build();
}

} // namespace tilejit::moe
