// batched_transpose.dsl.cpp - batched_transpose in the tile DSL: a block
// loads tiles_y block_x x block_y tiles of one batch, side by side, then
// transposes each (the compiler goes through shared memory) and stores it
// at the mirrored place; or (tma_stages) takes them one a step through a
// pipeline of TMA copies into shared memory.
#include "transpose/batched_transpose.h"

#include "tilejit/compiler/dsl.h"

#include <vector>

namespace tilejit::transpose {

Kernel batched_transpose_kernel(const BatchedTransposeSpec &s) {
  dsl::KernelBuilder k("batched_transpose", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", s.dtype, 3, access);
  auto out = k.tensor("out", s.dtype, 3, access);

  k.grid({k.blocks(x, 2, s.block_y * s.tiles_y), k.blocks(x, 1, s.block_x),
          k.blocks(x, 0)});
  auto b = k.block_id(2);
  auto x0 = k.block_id(1) * k.index(s.block_x);
  auto y0 = k.block_id(0) * k.index(s.block_y * s.tiles_y);
  // The host entry requires X and Y to be multiples of the tile, so every
  // tile is inside.
  const auto inside = dsl::Bounds::promised_inside;
  if (s.tma_stages > 0) {
    // One tile a step, copied (TMA) stages ahead into shared memory.
    auto tile = k.alloc_shared(s.dtype, {1, s.block_x, s.block_y});
    auto zero = k.index(0);
    k.pipelined(
        k.index(s.tiles_y), s.tma_stages, {},
        [&](dsl::Value step, std::vector<dsl::Value>) {
          auto y = y0 + step * k.index(s.block_y);
          k.copy(x, {b, x0, y}, tile);
          auto f = k.load(tile, {zero, zero, zero}, {1, s.block_x, s.block_y});
          k.store(k.transpose(f), out, {b, y, x0}, inside);
          return std::vector<dsl::Value>{};
        });
    return k.build();
  }
  // All tiles are loaded first: their loads are in flight together.
  std::vector<dsl::Value> tiles, ys;
  for (int32_t i = 0; i < s.tiles_y; ++i) {
    ys.push_back(y0 + k.index(i * s.block_y));
    tiles.push_back(
        k.load(x, {b, x0, ys[i]}, {1, s.block_x, s.block_y}, inside));
  }
  for (int32_t i = 0; i < s.tiles_y; ++i)
    k.store(k.transpose(tiles[i]), out, {b, ys[i], x0}, inside);
  return k.build();
}

} // namespace tilejit::transpose
