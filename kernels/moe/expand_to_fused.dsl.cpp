// expand_to_fused.dsl.cpp - expand_to_fused (and _with_sf) in the tile DSL,
// as TileKernels' kernel: block row b (the grid has max(T, N) of them)
// loads token b's row (or block_h columns of it) once and scatters it to
// the token's K fused rows (k.scatter on the flattened token_topk_to_pos;
// slots of -1 and tokens past T dropped), and zero-fills fused row b
// where pos_to_expert is negative. The scales' rows go the same way,
// sf_block columns a block.
#include "moe/expand_to_fused.h"

#include "tilejit/compiler/dsl.h"

#include <optional>

namespace tilejit::moe {

Kernel expand_to_fused_kernel(const ExpandToFusedSpec &s) {
  dsl::KernelBuilder k("expand_to_fused", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  const int64_t threads = s.threads, topk = s.topk;
  auto x = k.tensor("x", s.dtype, 2, dsl::vectors_of(s.vector_bytes));
  // token_topk_to_pos flattened to (T * K,): the scatters' row indices.
  auto targets = k.tensor("positions", DType::i32, 1);
  auto experts = k.tensor("pos_to_expert", DType::i32, 1);
  auto out = k.tensor("out", s.dtype, 2, dsl::vectors_of(s.vector_bytes));
  std::optional<dsl::Tensor> sf, out_sf;
  if (s.sf_block > 0) {
    // The scales' 32-bit words (f32 or four packed UE8M0 bytes) as i32;
    // out_sf of any strides (column-major: (1, align(N, 4))).
    sf = k.tensor("sf", DType::i32, 2);
    out_sf = k.tensor("out_sf", DType::i32, 2);
  }
  // A size only: max(T, N), the block rows.
  auto rows = k.tensor("rows", DType::u8, 1);
  k.grid({k.blocks(rows, 0), k.blocks(x, 1, s.block_h)});

  auto b = k.block_id(0), c = k.block_id(1);
  // Whether fused row b is padding (past N reads 0: not padding).
  auto padding = k.lt(k.load_scalar(experts, {b}), k.constant(0, DType::i32));
  // Columns [c w, (c + 1) w) of token b to each of its fused rows (one
  // scatter a slot, its row index read once), and zeros to fused row b if
  // it is padding; `w` = threads x `per_thread`. `author`: the scales'
  // narrow rows in a layout of their own (an element a thread), so that
  // they leave the kernel's vectors to x's rows.
  auto expand = [&](const dsl::Tensor &src, const dsl::Tensor &dst, DType dtype,
                    int64_t per_thread, bool author) {
    const int64_t w = threads * per_thread;
    auto c0 = c * k.index(w);
    auto row = k.load(src, {b, c0}, {1, w});
    if (author)
      row = k.relayout(row, 1);
    for (int64_t j = 0; j < topk; ++j)
      k.scatter(row, dst, targets, {b * k.index(topk) + k.index(j), c0});
    k.if_else(
        padding, {},
        [&](dsl::Value, std::vector<dsl::Value>) {
          auto zeros = k.full({1, w}, 0, dtype);
          k.store(author ? k.relayout(zeros, 1) : zeros, dst, {b, c0});
          return std::vector<dsl::Value>{};
        },
        [](dsl::Value, std::vector<dsl::Value>) {
          return std::vector<dsl::Value>{};
        });
  };
  expand(x, out, s.dtype, s.block_h / threads, false);
  if (sf)
    expand(*sf, *out_sf, DType::i32, s.sf_block / threads, true);
  return k.build();
}

} // namespace tilejit::moe
