// expand_to_fused.dsl.cpp - expand_to_fused (and _with_sf) in the tile DSL,
// as TileKernels' kernel: block row b (the grid has max(T, N) of them)
// loads token b's row (or block_h columns of it) once and stores it to
// the token's K fused rows (their indices read first from the flattened
// token_topk_to_pos; a slot of -1, or outside out, and a token past T
// skipped by one branch each), and zero-fills fused row b where
// pos_to_expert is negative. The scales' rows go the same way,
// sf_block columns a block.
#include "moe/expand_to_fused.h"

#include "tilejit/compiler/dsl.h"

#include <optional>
#include <vector>

namespace tilejit::moe {

Kernel expand_to_fused_kernel(const ExpandToFusedSpec &s) {
  dsl::KernelBuilder k("expand_to_fused", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  const int64_t threads = s.threads, topk = s.topk;
  auto x = k.tensor("x", s.dtype, 2, dsl::vectors_of(s.vector_bytes));
  // token_topk_to_pos flattened to (T * K,): the fused rows of the slots.
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
  // Token b's K fused rows (-1: none), all read here, before any store: a
  // k.scatter reads its row after the stores before it (they might alias),
  // one memory latency a slot.
  auto token = k.lt(b, k.dim(x, 0));
  std::vector<dsl::Value> slots;
  for (int64_t j = 0; j < topk; ++j)
    slots.push_back(k.load_scalar(targets, {b * k.index(topk) + k.index(j)}));
  // Columns [c w, (c + 1) w) of token b to each of its fused rows, and
  // zeros to fused row b if it is padding; `w` = threads x `per_thread`.
  // Past T and for a slot of -1, one branch skips the row: the stores'
  // bounds checks would drop it chunk by chunk and element by element
  // (where block_h divides H, the columns are promised inside and only
  // those branches check).
  // `author`: the scales' narrow rows in a layout of their own (an element
  // a thread), so that they leave the kernel's vectors to x's rows.
  auto expand = [&](const dsl::Tensor &src, const dsl::Tensor &dst, DType dtype,
                    int64_t per_thread, bool author) {
    const int64_t w = threads * per_thread;
    auto c0 = c * k.index(w);
    // Whole tiles of columns: the rows are checked here, once.
    const dsl::Bounds bounds = s.whole && !author ? dsl::Bounds::promised_inside
                                                  : dsl::Bounds::checked;
    auto fused_rows = k.cast(k.dim(dst, 0), DType::i32);
    k.when(token, [&] {
      auto row = k.load(src, {b, c0}, {1, w}, bounds);
      if (author)
        row = k.relayout(row, 1);
      for (const dsl::Value &slot : slots)
        k.when(k.ge(slot, k.constant(0, DType::i32)), [&] {
          k.when(k.lt(slot, fused_rows), [&] {
            k.store(row, dst, {slot, c0}, bounds);
          });
        });
    });
    k.when(padding, [&] {
      auto zeros = k.full({1, w}, 0, dtype);
      k.store(author ? k.relayout(zeros, 1) : zeros, dst, {b, c0}, bounds);
    });
  };
  expand(x, out, s.dtype, s.block_h / threads, false);
  if (sf)
    expand(*sf, *out_sf, DType::i32, s.sf_block / threads, true);
  return k.build();
}

} // namespace tilejit::moe
