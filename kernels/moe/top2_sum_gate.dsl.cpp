// top2_sum_gate.dsl.cpp - top2_sum_gate in the tile DSL: a warp holds
// block_t tokens' rows of logits (padded to a power of two, a token a warp
// from 256 experts on), consecutive logits a thread; scores and selection
// scores element-wise (softmax's sum in a warp's lane order); grouping ranks
// the groups of a (groups, size) view by the sum of their top two and knocks
// out all but the best; K rounds of row max, smallest expert holding it,
// knock-out. Then a lane a slot, as the original's warp: the picks' weights
// from their logits again, the sequential denominator from lane to lane,
// the physical map (k.load_at) and the TP renumbering.
#include "moe/top2_sum_gate.h"
#include "moe/gate_dsl.h"
#include "moe/reference.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>

namespace tilejit::moe {

namespace {

using dsl::KernelBuilder;
using dsl::Value;

/// sel with all but the best `keep` groups of `size` experts knocked out
/// (-inf): a group's score is its max plus the max of the rest (the first
/// maximum taken out), its rank the number of groups above it (or equal and
/// lower).
Value keep_best_groups(KernelBuilder &k, Value sel, int64_t rows, int64_t width,
                       int64_t size, int64_t keep) {
  const int64_t groups = width / size;
  const auto i32 = DType::i32;
  auto minus_inf =
      k.constant(-std::numeric_limits<float>::infinity(), DType::f32);
  auto s = k.reshape(sel, {rows, groups, size});
  auto at = k.iota({rows, groups, size}, 2);
  auto top = k.reduce_max(s, 2);
  auto first =
      k.reduce_min(k.select(k.eq(s, top), at, k.constant(size, i32)), 2);
  auto score = top + k.reduce_max(k.select(k.eq(at, first), minus_inf, s), 2);
  auto mine = k.broadcast(score, {rows, groups, groups});
  auto theirs =
      k.broadcast(k.reshape(score, {rows, 1, groups}), {rows, groups, groups});
  auto one = k.constant(1, i32), none = k.constant(0, i32);
  auto before = k.select(k.lt(k.iota({rows, groups, groups}, 2),
                              k.iota({rows, groups, groups}, 1)),
                         one, none);
  auto above = k.select(k.gt(theirs, mine), one,
                        k.select(k.eq(theirs, mine), before, none));
  auto kept = k.lt(k.reduce_sum(above, 2), k.constant(keep, i32));
  s = k.select(k.broadcast(kept, {rows, groups, size}), s, minus_inf);
  return k.reshape(s, {rows, width});
}

/// Expert v renumbered for this TP rank, -1 where it lives on another (spec
/// §1.4 step 8): r = v / per_rank must be tp_rank mod num_tp_ranks; then
/// v' = v - tp_rank * per_rank, dp = v' / per_dp, v' - dp * per_dp + dp *
/// per_rank. In i32 (experts and ranks are i32 on the host too; i32
/// divisions cost a third of i64 ones).
Value mask_by_tp(KernelBuilder &k, Value v, Value per_rank, Value tp_rank,
                 Value tp_ranks) {
  const auto i32 = DType::i32;
  auto rank = v / per_rank;
  auto here = k.eq(rank - (rank / tp_ranks) * tp_ranks, tp_rank);
  auto per_dp = per_rank * tp_ranks;
  auto local = v - tp_rank * per_rank;
  auto dp = local / per_dp;
  auto renumbered = local - dp * per_dp + dp * per_rank;
  auto minus_one = k.constant(-1, i32);
  auto zero = k.constant(0, i32);
  return k.select(
      k.lt(v, zero), minus_one,
      k.select(here, k.select(k.lt(renumbered, zero), minus_one, renumbered),
               minus_one));
}

} // namespace

Kernel top2_sum_gate_kernel(const Top2SumGateSpec &s) {
  KernelBuilder k("top2_sum_gate", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  const auto f32 = DType::f32, i32 = DType::i32, i64 = DType::i64;
  auto logits = k.tensor("logits", f32, 2, dsl::vectors_of(s.vector_bytes));
  // bias as (T, E) rows of stride 0: the same row for every token.
  auto bias = k.tensor("bias_rows", f32, 2, dsl::vectors_of(s.vector_bytes));
  std::optional<dsl::Tensor> mask, fix, map, count, unmapped, unmapped_out;
  if (s.mask)
    mask = k.tensor("mask", DType::u8, 1);
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
  auto scale = k.scalar("routed_scaling_factor", f32);
  auto per_rank = k.scalar("per_rank", i32);
  auto tp_rank = k.scalar("tp_rank", i32);
  auto tp_ranks = k.scalar("num_tp_ranks", i32);

  const int64_t bt = s.block_t, experts = s.num_experts;
  const int64_t width = std::bit_ceil(static_cast<uint64_t>(experts));
  k.grid({k.blocks(logits, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt), zero = k.index(0);
  const float inf = std::numeric_limits<float>::infinity();
  auto minus_inf = k.constant(-inf, f32);
  // Consecutive logits a thread (8, fewer where the block holds fewer than
  // 256): a row's reductions mostly in registers, and a group's (of at
  // most 32) within a few threads.
  const int vector = static_cast<int>(std::min<int64_t>(8, bt * width / 32));
  auto x = k.relayout(k.load(logits, {t0, zero}, {bt, width}), vector);
  auto col = k.iota({bt, width}, 1);
  auto valid = k.lt(col, k.constant(experts, i32));
  auto b = k.relayout(k.load(bias, {t0, zero}, {bt, width}), vector);

  // Selection scores (-inf past E): p + bias, softmax's logits + bias.
  // Softmax's row max and sum are kept for the weights; its sum adds each
  // lane's 4-element chunks in order, then the lanes by xor butterfly (the
  // reference's softmax_scores).
  const auto scoring = static_cast<ScoringFunc>(s.scoring);
  std::optional<Value> row_max, row_sum;
  auto score = [&](Value v) {
    switch (scoring) {
    case ScoringFunc::softmax:
      return k.exp(v - k.broadcast(*row_max, v.shape())) /
             k.broadcast(*row_sum, v.shape());
    case ScoringFunc::sqrtsoftplus:
      return k.sqrt(k.softplus(v));
    default:
      return k.sigmoid(v);
    }
  };
  Value sel;
  if (scoring == ScoringFunc::softmax) {
    auto xs = k.select(valid, x, minus_inf);
    row_max = k.reduce_max(xs, 1);
    row_sum = k.reduce_sum(k.relayout(k.exp(xs - *row_max), 4), 1);
    sel = x + b;
  } else {
    sel = score(x) + b;
  }
  sel = k.select(valid, sel, minus_inf);
  if (s.group_size > 0)
    sel = keep_best_groups(k, sel, bt, width, s.group_size, s.num_topk_groups);

  // K rounds: the row max, the smallest expert holding it, knocked out.
  const std::vector<Value> picks = top_k_rounds(k, sel, col, s.num_topk);

  // The slots as a (tokens, 32) tile laid out a slot a lane (vector 1), as
  // the original's warp: the per-slot work once an element (a per-token
  // value from a reduction holds copies in every lane), and lane j's weight
  // read by every lane of its row (shuffle_idx).
  const int64_t lanes = 32, slots = s.num_topk + s.num_shared;
  auto slot = k.relayout(k.iota({bt, lanes}, 1), 1);
  auto token =
      k.cast(t0, i64) + k.cast(k.relayout(k.iota({bt, lanes}, 0), 1), i64);
  auto routed_slot = k.lt(slot, k.constant(s.num_topk, i32));
  auto expert = slots_of(k, picks, slot);
  auto flag = [&](const dsl::Tensor &t) {
    return k.ne(k.load_at(t, {token}), k.constant(0, DType::u8));
  };
  std::optional<Value> routed;
  if (mask)
    routed = flag(*mask);
  if (fix) // a fixed-routing token's picks are its own
    expert = k.select(k.bit_and(flag(*fix), routed_slot),
                      k.cast(k.load_at(*unmapped, {token, slot}), i32), expert);
  // Each pick's score again, from its logit (the same operations, so the
  // same bits); 0 past the picks.
  auto w = k.select(routed_slot, score(k.load_at(logits, {token, expert})),
                    k.constant(0, f32));
  // 1e-20 first, then the weights in slot order; divide, then scale.
  auto denominator = k.full({bt, lanes}, 1e-20, f32);
  for (int j = 0; j < s.num_topk; ++j)
    denominator = denominator + k.shuffle_idx(w, 1, j);
  auto weight = w / denominator * scale;
  // Then the shared experts E, E + 1, ... of weight 1 (not scaled); -1 and
  // 0 past the slots (outside the outputs).
  auto shared = k.bit_and(k.ge(slot, k.constant(s.num_topk, i32)),
                          k.lt(slot, k.constant(slots, i32)));
  expert =
      k.select(shared, slot + k.constant(experts - s.num_topk, i32), expert);
  weight = k.select(shared, k.constant(1, f32), weight);

  auto logical = k.cast(expert, i64), minus_one = k.constant(-1, i64);
  if (unmapped_out) // the picks (slots past K fall outside the tensor)
    k.store(routed ? k.select(*routed, logical, minus_one) : logical,
            *unmapped_out, {t0, zero});
  Value physical = expert;
  if (map)
    physical = physical_expert(k, expert, token, *count, *map,
                               k.scalar("ep_rank", i64));
  physical = k.cast(mask_by_tp(k, physical, per_rank, tp_rank, tp_ranks), i64);
  if (routed) {
    physical = k.select(*routed, physical, minus_one);
    weight = k.select(*routed, weight, k.constant(0, f32));
  }
  k.store(physical, topk_idx, {t0, zero});
  k.store(weight, topk_weights, {t0, zero});
  return k.build();
}

} // namespace tilejit::moe
