// get_fused_mapping.dsl.cpp - get_fused_mapping in the tile DSL, two
// kernels over one split of the flat entries (block b takes a run of whole
// steps, a thread `per` consecutive entries a step):
//
// count: block b's count of each expert into row b of the scratch, and
//   every map set to -1 (the positions in a grid-stride loop, the entries
//   of token_topk_to_pos in the block's run);
// place: from the scratch, each expert's aligned total (segment starts: a
//   prefix sum over experts) and the count in blocks before b (where b's
//   entries of that expert begin); then, a step at a time, each entry's
//   rank among the step's entries of its expert: its thread's count in the
//   threads before (a prefix sum over threads) plus its own earlier
//   entries (a per-thread array), so that every segment is in ascending
//   flat order; token_topk_to_pos written, then read back to scatter the
//   three pos_to_* maps.
//
// Experts are taken `width` at a time (chunks), a (threads, width) tile of
// counts each thread's row.
#include "moe/get_fused_mapping.h"

#include "tilejit/compiler/dsl.h"

#include <vector>

namespace tilejit::moe {

namespace {

using dsl::Value;
using Values = std::vector<Value>;
constexpr DType i32 = DType::i32;

/// The flat topk_idx, the block's first entry and its number of steps.
struct Run {
  dsl::Tensor ids;
  Value first, steps;
};

Run block_run(dsl::KernelBuilder &k, const FusedMappingSpec &s) {
  Run r;
  r.ids = k.tensor("flat_topk_idx", DType::i64, 1, dsl::inner_contiguous());
  k.grid({dsl::Extent(s.blocks)});
  const int64_t step = int64_t{s.threads} * s.per;
  // ceil(F / (blocks x step)) steps a block.
  r.steps = (k.dim(r.ids, 0) + k.index(s.blocks * step - 1)) /
            k.index(s.blocks * step);
  r.first = k.block_id(0) * r.steps * k.index(step);
  return r;
}

/// The step's ids as (threads, per) i32, each thread its row, relative to
/// expert `base` (an index): outside [0, experts) and past the end,
/// -1 - base (so that no chunk's column matches).
Value step_ids(dsl::KernelBuilder &k, const FusedMappingSpec &s,
               const dsl::Tensor &ids, Value at, Value base) {
  const int64_t t = s.threads, per = s.per;
  auto c64 = [&](int64_t v) { return k.constant(v, DType::i64); };
  auto id = k.reshape(k.relayout(k.load(ids, {at}, {t * per}), per), {t, per});
  auto flat = k.iota({t, per}, 0) * k.constant(per, i32) + k.iota({t, per}, 1);
  auto inside = k.lt(flat + k.cast(at, i32), k.cast(k.dim(ids, 0), i32));
  id = k.select(inside, id, c64(-1));
  id = k.select(k.lt(id, c64(0)), c64(-1), id);
  id = k.select(k.lt(id, c64(s.experts)), id, c64(-1));
  return k.cast(id, i32) - k.cast(base, i32);
}

/// 1 where column j of a (threads, width) tile is the thread's `local` id.
Value one_hot(dsl::KernelBuilder &k, const FusedMappingSpec &s, Value local) {
  const int64_t t = s.threads, w = s.width;
  return k.select(
      k.eq(k.broadcast(local, {t, w}), k.relayout(k.iota({t, w}, 1), w)),
      k.constant(1, i32), k.constant(0, i32));
}

/// A (threads, width) tile of zeros laid out a row a thread.
Value zero_rows(dsl::KernelBuilder &k, const FusedMappingSpec &s) {
  return k.relayout(k.full({s.threads, s.width}, 0, i32), s.width);
}

} // namespace

Kernel get_fused_mapping_count_kernel(const FusedMappingSpec &s) {
  dsl::KernelBuilder k("get_fused_mapping_count", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  const Run run = block_run(k, s);
  auto to_pos =
      k.tensor("flat_token_topk_to_pos", i32, 1, dsl::inner_contiguous());
  auto scratch = k.tensor("scratch", i32, 2, dsl::inner_contiguous());
  std::vector<dsl::Tensor> maps;
  for (const char *name :
       {"pos_to_expert", "pos_to_token", "pos_to_token_topk"})
    maps.push_back(k.tensor(name, i32, 1, dsl::inner_contiguous()));
  const int64_t step = int64_t{s.threads} * s.per;
  auto b = k.block_id(0);

  // Every position -1, the blocks in turn a step's worth at a time.
  auto rounds = (k.dim(maps[0], 0) + k.index(s.blocks * step - 1)) /
                k.index(s.blocks * step);
  k.serial(k.index(0), rounds, {}, [&](Value i, Values) {
    auto at = (i * k.index(s.blocks) + b) * k.index(step);
    for (const dsl::Tensor &m : maps)
      k.store(k.full({step}, -1, i32), m, {at});
    return Values{};
  });

  // The block's entries of token_topk_to_pos -1.
  k.serial(k.index(0), run.steps, {}, [&](Value i, Values) {
    k.store(k.full({step}, -1, i32), to_pos, {run.first + i * k.index(step)});
    return Values{};
  });
  // A chunk of experts at a time (a loop: one set of buffers for all).
  k.serial(k.index(0), k.index(s.chunks), {}, [&](Value c, Values) {
    auto c0 = c * k.index(s.width);
    auto counts = k.serial(
        k.index(0), run.steps, {zero_rows(k, s)}, [&](Value i, Values acc) {
          auto at = run.first + i * k.index(step);
          Value sum = acc[0];
          for (const Value &col : k.unstack(step_ids(k, s, run.ids, at, c0)))
            sum = sum + one_hot(k, s, col);
          return Values{sum};
        })[0];
    k.store(k.reduce_sum(counts, 0), scratch, {b, c0});
    return Values{};
  });
  return k.build();
}

Kernel get_fused_mapping_place_kernel(const FusedMappingSpec &s) {
  dsl::KernelBuilder k("get_fused_mapping_place", s.threads);
  k.programmatic_launch();
  const Run run = block_run(k, s);
  auto to_pos =
      k.tensor("flat_token_topk_to_pos", i32, 1, dsl::inner_contiguous());
  auto topk = k.dim(k.tensor("token_topk_to_pos", i32, 2), 1);
  auto scratch = k.tensor("scratch", i32, 2, dsl::inner_contiguous());
  auto start_out = k.tensor("expert_start", i32, 1);
  auto end_out = k.tensor("expert_end", i32, 1);
  auto aligned_out = k.tensor("num_tokens_per_expert", i32, 1);
  auto alignment = k.scalar("alignment", i32);
  const int64_t t = s.threads, w = s.width, nb = s.blocks;
  const int64_t step = t * s.per;
  auto b = k.block_id(0);
  auto one = k.constant(1, i32);

  // A chunk of experts at a time (a loop: one set of buffers for all),
  // carrying the positions of the chunks before: a row of nb x w (the sum
  // over a scratch-shaped tile of zeros to begin), every column equal.
  auto none = k.reduce_sum(k.full({nb, w}, 0, i32), 0);
  k.serial(k.index(0), k.index(s.chunks), {none}, [&](Value c, Values prior) {
    auto c0 = c * k.index(w);
    // Each expert's total, aligned, and its count in blocks before b.
    auto counts = k.load(scratch, {k.index(0), c0}, {nb, w});
    auto total = k.reduce_sum(counts, 0); // (1, w)
    auto earlier = k.lt(k.iota({nb, w}, 0), k.cast(b, i32));
    auto before =
        k.reduce_sum(k.select(earlier, counts, k.constant(0, i32)), 0);
    auto aligned = (total + alignment - one) / alignment * alignment;
    // Starts: the prefix sum over experts, on the aligned totals repeated
    // over the tile's rows (a scan takes whole threads' worth), one row.
    auto repeated = k.broadcast(aligned, {nb, w});
    auto start = k.reduce_max(k.cumsum(repeated, 1) - repeated, 0) + prior[0];
    k.when(k.eq(b, k.index(0)), [&] {
      k.store(k.reshape(start, {w}), start_out, {c0});
      k.store(k.reshape(start + aligned, {w}), end_out, {c0});
      k.store(k.reshape(aligned, {w}), aligned_out, {c0});
    });

    // Where the step's entries of each expert begin, carried over steps.
    k.serial(k.index(0), run.steps, {start + before}, [&](Value i, Values at) {
      auto f0 = run.first + i * k.index(step);
      auto local = step_ids(k, s, run.ids, f0, c0);
      auto cols = k.unstack(local);
      Value mine = zero_rows(k, s);
      for (const Value &col : cols)
        mine = mine + one_hot(k, s, col);
      // Where the thread's entries of each expert begin (after those of
      // the threads before), then each entry after the thread's earlier
      // ones of its expert (compared in registers).
      Value begin =
          k.relayout(k.cumsum(mine, 0) - mine, w) + k.broadcast(at[0], {t, w});
      Values pos;
      for (size_t r = 0; r < cols.size(); ++r) {
        Value p = k.take(begin, 1, cols[r]);
        for (size_t q = 0; q < r; ++q)
          p = p + k.select(k.eq(cols[q], cols[r]), one, k.constant(0, i32));
        pos.push_back(p);
      }
      // 0 <= local < w, as one unsigned comparison.
      auto in_chunk =
          k.lt(k.bitcast(local, DType::u32), k.constant(w, DType::u32));
      k.store_where(k.reshape(in_chunk, {step}),
                    k.reshape(k.stack(pos), {step}), to_pos, {f0});
      return Values{at[0] + k.reduce_sum(mine, 0)};
    });
    auto sum = k.reduce_sum(aligned, 1); // (1, 1)
    return Values{prior[0] + k.broadcast(sum, {1, w})};
  });

  // The block's positions written: read back, the inverse maps scattered.
  k.barrier();
  auto experts = k.tensor("pos_to_expert_rows", i32, 2);
  auto tokens = k.tensor("pos_to_token_rows", i32, 2);
  auto flats = k.tensor("pos_to_token_topk_rows", i32, 2);
  k.serial(k.index(0), run.steps, {}, [&](Value i, Values) {
    auto f0 = run.first + i * k.index(step);
    auto id = k.reshape(step_ids(k, s, run.ids, f0, k.index(0)), {step, 1});
    auto flat = k.iota({step, 1}, 0) + k.cast(f0, i32);
    auto zero = k.index(0);
    k.scatter(id, experts, to_pos, {f0, zero});
    k.scatter(flat / k.cast(topk, i32), tokens, to_pos, {f0, zero});
    k.scatter(flat, flats, to_pos, {f0, zero});
    return Values{};
  });
  return k.build();
}

} // namespace tilejit::moe
