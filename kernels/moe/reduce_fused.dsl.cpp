// reduce_fused.dsl.cpp - reduce_fused in the tile DSL: a block takes one
// token and block_h columns; the token's K slot positions, weights and row
// scales are scalars (k.load_scalar, the same in every thread), its K
// fused rows are gathered (k.gather on the flattened token_topk_to_pos,
// all loads in flight at once) and added into the f32 accumulator with one
// fma each, in slot order, skipping slots of -1.
#include "moe/reduce_fused.h"

#include "tilejit/compiler/dsl.h"

#include <optional>
#include <vector>

namespace tilejit::moe {

Kernel reduce_fused_kernel(const ReduceFusedSpec &s) {
  dsl::KernelBuilder k("reduce_fused", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  const int64_t bh = s.block_h, topk = s.topk;
  auto x = k.tensor("x", s.in_dtype, 2, access);
  // token_topk_to_pos and topk_weights flattened to (T * K,).
  auto positions = k.tensor("positions", DType::i32, 1);
  std::optional<dsl::Tensor> weights, row_sf, sf;
  if (s.weights)
    weights = k.tensor("weights", DType::f32, 1);
  if (s.x_sf)
    row_sf = k.tensor("x_sf", DType::f32, 1);
  if (s.sf)
    sf = k.tensor("sf", DType::f32, 1);
  auto out = k.tensor("out", s.out_dtype, 2, access);
  k.grid({k.blocks(out, 0, 1), k.blocks(out, 1, bh)});

  auto t = k.block_id(0), c0 = k.block_id(1) * k.index(bh);
  auto first = t * k.index(topk); // the token's first slot
  // Every slot's row first, so that the loads are all in flight at once.
  std::vector<dsl::Value> rows;
  for (int64_t j = 0; j < topk; ++j)
    rows.push_back(k.gather(x, positions, {first + k.index(j), c0}, {1, bh},
                            dsl::Bounds::promised_inside));
  auto acc = k.full({1, bh}, 0.0, DType::f32);
  for (int64_t j = 0; j < topk; ++j) {
    auto slot = first + k.index(j);
    auto position = k.load_scalar(positions, {slot});
    // s = weight (1 without weights), times x_sf of the row.
    auto scale =
        weights ? k.load_scalar(*weights, {slot}) : k.constant(1.0, DType::f32);
    if (row_sf)
      scale = scale * k.load_scalar(*row_sf, {position});
    auto valid = k.ge(position, k.constant(0, DType::i32));
    acc = k.select(valid, k.fma(k.cast(rows[j], DType::f32), scale, acc), acc);
  }
  if (sf)
    acc = acc * k.load_scalar(*sf, {k.index(0)});
  k.store(k.cast(acc, s.out_dtype), out, {t, c0}, dsl::Bounds::promised_inside);
  return k.build();
}

} // namespace tilejit::moe
