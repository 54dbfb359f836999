// group_count.dsl.cpp - group_count in the tile DSL: a one-block kernel
// zeroes the output; the counting kernel, launched while it runs, has each
// block take a run of the flattened ids in steps and count them, then wait
// for the zeroing and add the block's counts to the output atomically. Up
// to 32 groups, each step's ids are compared with every group (an (ids,
// groups) tile of 0 and 1, its columns summed); above, in each warp, each
// group of equal ids (__match_any_sync's) adds its size once, from its
// first lane, to the warp's row of a shared histogram, whose rows are
// summed 32 groups at a time (the work an id then does not grow with the
// groups).
#include "moe/group_count_dsl.h"
#include "moe/warp_groups.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilejit::moe {

namespace {

using dsl::Value;
using AddFn = std::function<void(Value counts, int64_t first)>;

/// Each step's ids compared with a chunk of the groups at a time.
void count_by_compare(dsl::KernelBuilder &k, const dsl::Tensor &ids,
                      const GroupCountSpec &s, const AddFn &add) {
  const int64_t n = s.block, g = s.groups, chunk = s.chunk;
  auto c64 = [&](int64_t v) { return k.constant(v, DType::i64); };
  // Each step's ids as (n, 1) i32, all loaded first. Past the end, loads
  // read 0, a group: those positions become -1, and so does any id
  // outside [0, groups) (before it is narrowed to 32 bits).
  std::vector<Value> steps;
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
    std::optional<Value> ones;
    for (const Value &narrow : steps) {
      auto step =
          k.select(k.eq(k.broadcast(narrow, {n, chunk}), group),
                   k.constant(1, DType::i32), k.constant(0, DType::i32));
      ones = ones ? *ones + step : step;
    }
    add(k.reshape(k.reduce_sum(*ones, 0), {chunk}), first);
  }
}

/// Each step's groups of equal ids in a warp add their sizes to the warp's
/// row of a shared histogram.
void count_by_match(dsl::KernelBuilder &k, const dsl::Tensor &ids,
                    const GroupCountSpec &s, const AddFn &add) {
  const int64_t n = s.block, g = s.groups, chunk = s.chunk;
  const int64_t warps = s.threads / 32;
  auto c64 = [&](int64_t v) { return k.constant(v, DType::i64); };
  auto i32 = DType::i32;
  auto hist = k.alloc_shared(i32, {warps, g});
  auto zero = k.index(0);
  k.store(k.full({warps, g}, 0, i32), hist, {zero, zero});
  k.barrier();
  // Each step's ids, all loaded first. Past the end, and for an id
  // outside [0, groups) (before it is narrowed to 32 bits): -1, dropped.
  auto lane = lane_tile(k, warps, 1), warp = lane_tile(k, warps, 0);
  auto within = k.cast(warp * k.constant(32, i32) + lane, DType::i64);
  std::vector<Value> steps;
  for (int64_t step = 0; step < s.steps; ++step) {
    auto at = k.cast(k.block_id(0) * k.index(n * s.steps) + k.index(step * n),
                     DType::i64) +
              within;
    auto id = k.load_at(ids, {at});
    auto ok = k.bit_and(k.lt(at, k.cast(k.dim(ids, 0), DType::i64)),
                        k.bit_and(k.ge(id, c64(0)), k.lt(id, c64(g))));
    steps.push_back(k.cast(k.select(ok, id, c64(-1)), i32));
  }
  const Value below = lanes_below(k, warps);
  for (const Value &id : steps)
    add_group_sizes(k, hist, warp_groups(k, id, below));
  k.barrier();
  for (int64_t first = 0; first < g; first += chunk)
    add(k.reshape(k.reduce_sum(
                      k.load(hist, {zero, k.index(first)}, {warps, chunk}), 0),
                  {chunk}),
        first);
}

} // namespace

void count_block_groups(dsl::KernelBuilder &k, const dsl::Tensor &ids,
                        const GroupCountSpec &s, const AddFn &add) {
  k.grid({k.blocks(ids, 0, int64_t{s.block} * s.steps)});
  // The block's counts first (they read only the ids, which the zeroing
  // kernel before does not write), then the wait for it, then the adds.
  std::vector<std::pair<Value, int64_t>> counts;
  auto keep = [&](Value c, int64_t first) { counts.emplace_back(c, first); };
  if (s.match)
    count_by_match(k, ids, s, keep);
  else
    count_by_compare(k, ids, s, keep);
  k.grid_wait();
  for (const auto &[c, first] : counts)
    add(c, first);
}

Kernel zero_counts_kernel(const std::string &kernel, const std::string &name,
                          DType dtype, const GroupCountSpec &s) {
  // A power of two or whole chunks of 32, at least a warp (past the output's
  // size, stores are dropped).
  const int32_t n = std::max(32, s.groups);
  dsl::KernelBuilder k(kernel, n);
  // Launched while the kernel before it finishes; the counting kernel after
  // it launches once its wait is over.
  k.programmatic_launch();
  auto out = k.tensor(name, dtype, 1);
  k.grid({dsl::Extent(1)});
  k.store(k.full({n}, 0, dtype), out, {k.index(0)});
  return k.build();
}

Kernel group_count_zero_kernel(const GroupCountSpec &s) {
  return zero_counts_kernel("group_count_zero", "counts", DType::i32, s);
}

Kernel group_count_kernel(const GroupCountSpec &s) {
  dsl::KernelBuilder k("group_count", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
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
