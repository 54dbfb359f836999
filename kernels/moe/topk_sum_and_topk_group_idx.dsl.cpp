// topk_sum_and_topk_group_idx.dsl.cpp - the group ranking in the tile DSL:
// a block takes `rows` tokens as a (rows, groups, size) tile (padding
// -inf), a group's score is its max, or its max plus the max of the rest
// (the first maximum taken out), a group's rank is the number of groups
// above it (or equal and lower), and output column j is the group of rank
// j: all comparisons of whole tiles, no sort.
#include "moe/topk_sum_and_topk_group_idx.h"

#include "tilejit/compiler/dsl.h"

#include <limits>

namespace tilejit::moe {

Kernel topk_sum_and_topk_group_idx_kernel(const TopkGroupSpec &s) {
  dsl::KernelBuilder k("topk_sum_and_topk_group_idx", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  const int64_t r = s.rows, g = s.groups, n = s.size, c = s.out_cols;
  // Groups of 16-byte aligned rows load straight into whole groups a
  // thread; others through shared memory.
  auto scores =
      k.tensor("scores", DType::f32, 3, dsl::vectors_of(s.vector_bytes));
  auto out = k.tensor("group_idx", DType::i64, 2);
  k.grid({k.blocks(scores, 0, r)});
  auto t0 = k.block_id(0) * k.index(r), zero = k.index(0);
  const auto f32 = DType::f32, i32 = DType::i32;
  auto minus_inf = k.constant(-std::numeric_limits<float>::infinity(), f32);

  // Each thread holds whole groups (the maxima in registers). Past G
  // groups or N scores (read as 0): -inf, below every score.
  auto x = k.relayout(k.load(scores, {t0, zero, zero}, {r, g, n}), n);
  x = k.select(
      k.lt(k.iota({r, g, n}, 1), k.constant(s.real_groups, i32)),
      k.select(k.lt(k.iota({r, g, n}, 2), k.constant(s.real_size, i32)), x,
               minus_inf),
      minus_inf);
  auto score = k.reduce_max(x, 2); // (r, g, 1)
  if (s.sum == 2) {
    // The first maximum out, then the largest of the rest.
    auto at = k.iota({r, g, n}, 2);
    auto first =
        k.reduce_min(k.select(k.eq(x, score), at, k.constant(n, i32)), 2);
    score = score + k.reduce_max(k.select(k.eq(at, first), minus_inf, x), 2);
  }
  // rank[g] = #{h : s[h] > s[g] or (s[h] == s[g] and h < g)}.
  auto mine = k.broadcast(score, {r, g, g});
  auto theirs = k.broadcast(k.reshape(score, {r, 1, g}), {r, g, g});
  auto one = k.constant(1, i32), none = k.constant(0, i32);
  auto before =
      k.select(k.lt(k.iota({r, g, g}, 2), k.iota({r, g, g}, 1)), one, none);
  auto above = k.select(k.gt(theirs, mine), one,
                        k.select(k.eq(theirs, mine), before, none));
  auto rank = k.reduce_sum(above, 2); // (r, g, 1)
  // Column j: the group whose rank is j.
  auto ranks = k.broadcast(k.reshape(rank, {r, 1, g}), {r, c, g});
  auto group = k.iota({r, c, g}, 2);
  auto picked = k.reduce_sum(
      k.select(k.eq(ranks, k.iota({r, c, g}, 1)), group, k.constant(0, i32)),
      2); // (r, c, 1)
  k.store(k.cast(k.reshape(picked, {r, c}), DType::i64), out, {t0, zero});
  return k.build();
}

} // namespace tilejit::moe
