// get_fused_mapping.dsl.cpp - get_fused_mapping in the tile DSL, two
// kernels over one split of the flat entries: warp g (= block b x warps +
// its warp w) takes the L consecutive entries from g x L, `per` sub-batches
// of 32 (a lane an entry) a step, so that the warps' runs are in flat order.
//
// count: block b's count of each expert (a shared histogram: each group of
//   equal ids in a sub-batch, __match_any_sync's, adds its size once, from
//   its first lane) into row b of the scratch; every pos_to_* map set to -1.
// place: each warp's count of each expert (the histogram again, a row a
//   warp, while the count kernel finishes: a programmatic launch that
//   waits for it only after); each expert's aligned total and its count in
//   blocks before b (from the scratch: the segment starts, a prefix sum
//   over experts, and where block b's entries of each expert begin), and
//   where each warp's entries of each expert begin (a prefix sum over
//   warps); then
//   each warp walks its run in order: an entry's position is its expert's
//   next one in the warp's row plus its rank among its equals in the
//   sub-batch (the popcount of its match mask below its lane), and the
//   group's first lane moves the row on by the group's size. The four maps
//   are written from each entry (token_topk_to_pos -1 where unused).
#include "moe/get_fused_mapping.h"
#include "moe/warp_groups.h"

#include "tilejit/compiler/dsl.h"

#include <functional>
#include <vector>

namespace tilejit::moe {

namespace {

using dsl::Value;
using Values = std::vector<Value>;
constexpr DType i32 = DType::i32;
constexpr DType i64 = DType::i64;

/// The split of the flat entries: warp g takes the `run` entries from
/// g x run, `steps` steps of `per` sub-batches of 32.
struct Split {
  dsl::Tensor ids;
  Value entries; ///< F, as an i64 scalar
  Value steps;   ///< an index
  Value run;     ///< entries a warp, an i64 scalar
  Value below;   ///< lanes_below's
};

Split split(dsl::KernelBuilder &k, const FusedMappingSpec &s) {
  Split r;
  r.ids = k.tensor("flat_topk_idx", i64, 1, dsl::inner_contiguous());
  k.grid({dsl::Extent(s.blocks)});
  const int64_t warps = s.threads / 32, step = warps * s.per * 32;
  // ceil(F / (blocks x step)) steps a warp.
  r.steps = (k.dim(r.ids, 0) + k.index(s.blocks * step - 1)) /
            k.index(s.blocks * step);
  r.entries = k.cast(k.dim(r.ids, 0), i64);
  r.run = k.cast(r.steps, i64) * k.constant(s.per * 32, i64);
  r.below = lanes_below(k, warps);
  return r;
}

/// One sub-batch: its entries' flat positions (i64) and their experts'
/// groups in each warp (ids i32; -1 for an id outside [0, experts) and past
/// the end).
struct Batch {
  Value flat;
  WarpGroups g;
};

/// Sub-batch u of step i of every warp of the block.
Batch batch(dsl::KernelBuilder &k, const FusedMappingSpec &s, const Split &r,
            Value i, int64_t u) {
  const int64_t warps = s.threads / 32;
  auto warp = k.cast(k.block_id(0), i64) * k.constant(warps, i64) +
              k.cast(lane_tile(k, warps, 0), i64);
  auto at = (k.cast(i, i64) * k.constant(s.per, i64) + k.constant(u, i64)) *
            k.constant(32, i64);
  Batch b;
  b.flat = warp * r.run + at + k.cast(lane_tile(k, warps, 1), i64);
  auto id = k.load_at(r.ids, {b.flat});
  auto c64 = [&](int64_t v) { return k.constant(v, i64); };
  auto ok = k.bit_and(k.lt(b.flat, r.entries),
                      k.bit_and(k.ge(id, c64(0)), k.lt(id, c64(s.experts))));
  b.g = warp_groups(k, k.cast(k.select(ok, id, c64(-1)), i32), r.below);
  return b;
}

/// Step i's `per` sub-batches, their loads first.
std::vector<Batch> step(dsl::KernelBuilder &k, const FusedMappingSpec &s,
                        const Split &r, Value i) {
  std::vector<Batch> batches;
  for (int64_t u = 0; u < s.per; ++u)
    batches.push_back(batch(k, s, r, i, u));
  return batches;
}

/// The block's steps from `from` on, in turn.
void each_step(dsl::KernelBuilder &k, const FusedMappingSpec &s, const Split &r,
               Value from, const std::function<void(const Batch &)> &body) {
  k.serial(from, r.steps, {}, [&](Value i, Values) {
    for (const Batch &b : step(k, s, r, i))
      body(b);
    return Values{};
  });
}

/// Columns of the experts' tables: chunks x width.
int64_t columns(const FusedMappingSpec &s) {
  return int64_t{s.chunks} * s.width;
}

/// Each warp's count of each expert over its run, a (warps, columns)
/// shared tile a row a warp: each group of equal ids in a sub-batch adds
/// its size once, from its first lane. Read after a barrier. The first
/// step's sub-batches (every step there is up to blocks x threads x per
/// entries) are kept in `held`, for the caller to use again.
Value warp_histogram(dsl::KernelBuilder &k, const FusedMappingSpec &s,
                     const Split &r, std::vector<Batch> &held) {
  const int64_t warps = s.threads / 32, cols = columns(s);
  auto hist = k.alloc_shared(i32, {warps, cols});
  k.store(k.full({warps, cols}, 0, i32), hist, {k.index(0), k.index(0)});
  k.barrier();
  auto add = [&](const Batch &b) { add_group_sizes(k, hist, b.g); };
  held = step(k, s, r, k.index(0));
  for (const Batch &b : held)
    add(b);
  each_step(k, s, r, k.index(1), add);
  k.barrier();
  return hist;
}

} // namespace

Kernel get_fused_mapping_count_kernel(const FusedMappingSpec &s) {
  dsl::KernelBuilder k("get_fused_mapping_count", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  const Split r = split(k, s);
  auto scratch = k.tensor("scratch", i32, 2, dsl::inner_contiguous());
  std::vector<dsl::Tensor> maps;
  for (const char *name :
       {"pos_to_expert", "pos_to_token", "pos_to_token_topk"})
    maps.push_back(k.tensor(name, i32, 1, dsl::inner_contiguous()));
  auto b = k.block_id(0);

  // Every position -1, the blocks in turn a step's worth at a time.
  const int64_t fill = int64_t{s.threads} * 8;
  auto rounds = (k.dim(maps[0], 0) + k.index(s.blocks * fill - 1)) /
                k.index(s.blocks * fill);
  k.serial(k.index(0), rounds, {}, [&](Value i, Values) {
    auto at = (i * k.index(s.blocks) + b) * k.index(fill);
    for (const dsl::Tensor &m : maps)
      k.store(k.full({fill}, -1, i32), m, {at});
    return Values{};
  });

  // The block's histogram, a row a warp (a group of equal ids adds its
  // size once), summed over the warps a chunk of experts at a time.
  const int64_t warps = s.threads / 32;
  std::vector<Batch> held;
  auto hist = warp_histogram(k, s, r, held);
  k.serial(k.index(0), k.index(s.chunks), {}, [&](Value c, Values) {
    auto c0 = c * k.index(s.width);
    k.store(k.reduce_sum(k.load(hist, {k.index(0), c0}, {warps, s.width}), 0),
            scratch, {b, c0});
    return Values{};
  });
  return k.build();
}

Kernel get_fused_mapping_place_kernel(const FusedMappingSpec &s) {
  dsl::KernelBuilder k("get_fused_mapping_place", s.threads);
  k.programmatic_launch();
  const Split r = split(k, s);
  auto to_pos =
      k.tensor("flat_token_topk_to_pos", i32, 1, dsl::inner_contiguous());
  auto topk = k.dim(k.tensor("token_topk_to_pos", i32, 2), 1);
  auto scratch = k.tensor("scratch", i32, 2, dsl::inner_contiguous());
  auto start_out = k.tensor("expert_start", i32, 1);
  auto end_out = k.tensor("expert_end", i32, 1);
  auto aligned_out = k.tensor("num_tokens_per_expert", i32, 1);
  auto alignment = k.scalar("alignment", i32);
  auto experts = k.tensor("pos_to_expert", i32, 1, dsl::inner_contiguous());
  auto tokens = k.tensor("pos_to_token", i32, 1, dsl::inner_contiguous());
  auto flats = k.tensor("pos_to_token_topk", i32, 1, dsl::inner_contiguous());
  const int64_t w = s.width, warps = s.threads / 32, cols = columns(s);
  // The scratch's rows are read a thread's worth at a time: `rows` of them
  // a group, `groups` groups.
  const int64_t rows = s.threads / w, groups = (s.blocks + rows - 1) / rows;
  auto b = k.block_id(0);
  auto one = k.constant(1, i32);
  auto zero = k.constant(0, i32);

  // Each warp's count of each expert; then, a chunk of experts at a time,
  // where each warp's entries of each expert begin: the expert's segment
  // start, its count in the blocks before b and in the warps before. The
  // chunks carry the positions of the chunks before (a row of w, the sum
  // over a group's tile of zeros to begin, every column equal).
  //
  // The histogram reads only the op's input: it is counted while the count
  // kernel finishes, and the kernel waits for that grid only then. The
  // first step's entries stay in registers until they are placed.
  std::vector<Batch> held;
  auto hist = warp_histogram(k, s, r, held);
  k.grid_wait();
  auto next = k.alloc_shared(i32, {warps, cols});
  auto none = k.reduce_sum(k.full({rows, w}, 0, i32), 0);
  k.serial(k.index(0), k.index(s.chunks), {none}, [&](Value c, Values prior) {
    auto c0 = c * k.index(w);
    // Each expert's total, aligned, and its count in blocks before b: the
    // scratch's rows a group at a time (rows past the blocks read 0), every
    // group's load issued before the first sum, summed in each thread, then
    // over the threads once. (A tile of every row held 255 registers at 256
    // experts; a loop over the groups waited for each group's load in turn.)
    Values groups_of;
    for (int64_t g = 0; g < groups; ++g)
      groups_of.push_back(k.load(scratch, {k.index(g * rows), c0}, {rows, w}));
    auto total = k.full({rows, w}, 0, i32), before = total;
    auto row = k.iota({rows, w}, 0), b32 = k.cast(b, i32);
    for (int64_t g = 0; g < groups; ++g) {
      auto earlier = k.lt(row + k.constant(g * rows, i32), b32);
      total = total + groups_of[g];
      before = before + k.select(earlier, groups_of[g], zero);
    }
    total = k.reduce_sum(total, 0); // (1, w)
    before = k.reduce_sum(before, 0);
    auto aligned = (total + alignment - one) / alignment * alignment;
    // Starts: the prefix sum over experts, on the aligned totals repeated
    // over a thread's worth of rows (a scan takes whole threads' worth),
    // one row.
    auto repeated = k.broadcast(aligned, {s.threads / w, w});
    auto start = k.reduce_max(k.cumsum(repeated, 1) - repeated, 0) + prior[0];
    k.when(k.eq(b, k.index(0)), [&] {
      k.store(k.reshape(start, {w}), start_out, {c0});
      k.store(k.reshape(start + aligned, {w}), end_out, {c0});
      k.store(k.reshape(aligned, {w}), aligned_out, {c0});
    });
    auto mine = k.load(hist, {k.index(0), c0}, {warps, w});
    k.store(k.broadcast(start + before, {warps, w}) + k.cumsum(mine, 0) - mine,
            next, {k.index(0), c0});
    auto sum = k.reduce_sum(aligned, 1); // (1, 1)
    return Values{prior[0] + k.broadcast(sum, {1, w})};
  });
  k.barrier();
  auto warp = lane_tile(k, warps, 0);

  // Each warp's run in order: an entry's position is its expert's next one
  // in the warp's row plus its rank among its equals; the group's first
  // lane moves the row on by the group's size (seen after a warp barrier).
  auto minus_one = k.constant(-1, i32);
  auto place = [&](const Batch &bt) {
    const WarpGroups &g = bt.g;
    auto used = k.ge(g.id, zero);
    auto first = k.load_at(next, {warp, g.id});
    auto rank = k.bitcast(k.popcount(k.bit_and(g.mask, g.below)), i32);
    auto size = k.bitcast(k.popcount(g.mask), i32);
    auto pos = first + rank;
    auto flat = k.cast(bt.flat, i32);
    k.store_at(k.select(used, pos, minus_one), to_pos, {bt.flat},
               k.lt(bt.flat, r.entries));
    k.store_at(g.id, experts, {pos}, used);
    k.store_at(flat / k.cast(topk, i32), tokens, {pos}, used);
    k.store_at(flat, flats, {pos}, used);
    // Every lane has read its warp's row before the first lanes move it on
    // (the lanes of a warp are not in step), and the next sub-batch reads
    // it after; no other warp touches the row.
    k.sync_warp();
    k.store_at(first + size, next, {warp, g.id}, group_leads(k, g));
    k.sync_warp();
  };
  for (const Batch &bt : held)
    place(bt);
  each_step(k, s, r, k.index(1), place);
  return k.build();
}

} // namespace tilejit::moe
