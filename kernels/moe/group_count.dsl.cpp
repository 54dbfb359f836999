// group_count.dsl.cpp - group_count in the tile DSL: a block takes a run of
// the flattened ids in steps, compares each step's with a chunk of the
// groups at a time (an (ids, chunk) tile of 0 and 1), sums the tiles'
// columns and adds the block's counts to the output atomically (which the
// op zeroed first).
#include "moe/group_count_dsl.h"

#include <optional>
#include <vector>

namespace tilejit::moe {

void count_block_groups(
    dsl::KernelBuilder &k, const dsl::Tensor &ids, const GroupCountSpec &s,
    const std::function<void(dsl::Value counts, int64_t first)> &add) {
  const int64_t n = s.block, g = s.groups, chunk = s.chunk;
  k.grid({k.blocks(ids, 0, n * s.steps)});
  auto c64 = [&](int64_t v) { return k.constant(v, DType::i64); };
  // Each step's ids as (n, 1) i32, all loaded first. Past the end, loads
  // read 0, a group: those positions become -1, and so does any id
  // outside [0, groups) (before it is narrowed to 32 bits).
  std::vector<dsl::Value> steps;
  for (int64_t step = 0; step < s.steps; ++step) {
    auto at = k.block_id(0) * k.index(n * s.steps) + k.index(step * n);
    auto valid = k.lt(k.iota({n}, 0) + k.cast(at, DType::i32),
                      k.cast(k.dim(ids, 0), DType::i32));
    auto id = k.select(valid, k.load(ids, {at}, {n}), c64(-1));
    id = k.select(k.lt(id, c64(0)), c64(-1), id);
    id = k.select(k.lt(id, c64(g)), id, c64(-1));
    steps.push_back(k.reshape(k.cast(id, DType::i32), {n, 1}));
  }
  for (int64_t first = 0; first < g; first += chunk) {
    auto group = k.iota({n, chunk}, 1) + k.constant(first, DType::i32);
    // The steps' 0/1 tiles summed element-wise, then one column sum.
    std::optional<dsl::Value> ones;
    for (const dsl::Value &narrow : steps) {
      auto step =
          k.select(k.eq(k.broadcast(narrow, {n, chunk}), group),
                   k.constant(1, DType::i32), k.constant(0, DType::i32));
      ones = ones ? *ones + step : step;
    }
    add(k.reshape(k.reduce_sum(*ones, 0), {chunk}), first);
  }
}

Kernel group_count_kernel(const GroupCountSpec &s) {
  dsl::KernelBuilder k("group_count", s.threads);
  // group_idx flattened to (T * K,).
  auto ids = k.tensor("flat_group_idx", DType::i64, 1, dsl::inner_contiguous());
  auto counts = k.tensor("counts", DType::i32, 1);
  // Counts past num_groups (the last chunk's padding) are dropped.
  count_block_groups(k, ids, s, [&](dsl::Value block_counts, int64_t first) {
    k.atomic_add(block_counts, counts, {k.index(first)});
  });
  return k.build();
}

} // namespace tilejit::moe
