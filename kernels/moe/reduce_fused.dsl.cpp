// reduce_fused.dsl.cpp - reduce_fused in the tile DSL: a block takes one
// token and block_h columns, gathers the token's K fused rows one at a time
// (k.gather on the flattened token_topk_to_pos) and adds each into its
// f32 accumulator with one fma, in slot order, skipping slots of -1.
#include "moe/reduce_fused.h"

#include "tilejit/compiler/dsl.h"

#include <bit>
#include <optional>
#include <vector>

namespace tilejit::moe {

Kernel reduce_fused_kernel(const ReduceFusedSpec &s) {
  dsl::KernelBuilder k("reduce_fused", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bh = s.block_h, topk = s.topk, threads = s.threads;
  const int64_t per_thread = bh / threads;
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(topk)));
  auto x = k.tensor("x", s.in_dtype, 2, access);
  // token_topk_to_pos flattened to (T * K,): the gather's row indices.
  auto flat = k.tensor("positions", DType::i32, 1);
  // Per-slot values, repeated for every thread (a second dimension of
  // stride 0, and a last of size 1): the slots' positions, weights and
  // x_sf of their rows; sf as (1, threads, 1), its one element repeated.
  auto slot_pos = k.tensor("slot_pos", DType::i32, 3);
  std::optional<dsl::Tensor> slot_weight, row_sf, sf;
  if (s.weights)
    slot_weight = k.tensor("slot_weight", DType::f32, 3);
  if (s.x_sf)
    row_sf = k.tensor("row_sf", DType::f32, 3);
  if (s.sf)
    sf = k.tensor("sf", DType::f32, 3);
  auto out = k.tensor("out", s.out_dtype, 2, access);
  k.grid({k.blocks(out, 0, 1), k.blocks(out, 1, bh)});

  auto t = k.block_id(0), c0 = k.block_id(1) * k.index(bh);
  auto first = t * k.index(topk); // the token's first slot
  // (width, threads, 1): thread j holds [:, j, 0], every slot (chunks of
  // one element dealt in turn), so that take along dim 0 stays in
  // registers and its (1, threads, 1) broadcasts along each thread's
  // columns of a (1, threads, per_thread) row.
  auto per_slot = [&](dsl::Value v) { return k.relayout(v, 1); };
  auto zero = k.index(0);
  const std::vector<int64_t> slots_shape = {width, threads, 1};
  const std::vector<int64_t> row_shape = {1, threads, per_thread};
  auto positions = per_slot(k.load(slot_pos, {first, zero, zero}, slots_shape));
  std::optional<dsl::Value> weights, scales;
  if (slot_weight)
    weights = per_slot(k.load(*slot_weight, {first, zero, zero}, slots_shape));
  if (row_sf)
    scales =
        per_slot(k.gather(*row_sf, flat, {first, zero, zero}, slots_shape));
  // Every slot's row first, so that the loads are all in flight at once.
  std::vector<dsl::Value> rows;
  for (int64_t j = 0; j < topk; ++j)
    rows.push_back(k.gather(x, flat, {first + k.index(j), c0}, {1, bh},
                            dsl::Bounds::promised_inside));
  auto acc = k.full(row_shape, 0.0, DType::f32);
  for (int64_t j = 0; j < topk; ++j) {
    auto slot = k.index(j);
    auto row = k.reshape(k.cast(rows[j], DType::f32), row_shape);
    // s = weight (1 without weights), times x_sf of the row.
    std::optional<dsl::Value> scale;
    if (weights)
      scale = k.take(*weights, 0, slot);
    if (scales)
      scale =
          scale ? *scale * k.take(*scales, 0, slot) : k.take(*scales, 0, slot);
    auto s_row = scale ? k.broadcast(*scale, row_shape)
                       : k.full(row_shape, 1.0, DType::f32);
    auto valid = k.ge(k.take(positions, 0, slot), k.constant(0, DType::i32));
    acc = k.select(valid, k.fma(row, s_row, acc), acc);
  }
  if (sf)
    acc = acc * k.broadcast(
                    per_slot(k.load(*sf, {zero, zero, zero}, {1, threads, 1})),
                    row_shape);
  k.store(k.reshape(k.cast(acc, s.out_dtype), {1, bh}), out, {t, c0},
          dsl::Bounds::promised_inside);
  return k.build();
}

} // namespace tilejit::moe
