// scale_copy.dsl.cpp - scale_copy in the tile DSL: one block per
// block_m x block_n tile; the tile is loaded, scaled and stored. Tails read
// zero and drop their stores (tile.load / tile.store bounds checks).
#include "elementwise/scale_copy.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::elementwise {

Kernel scale_copy_kernel(const ScaleCopySpec &s) {
  dsl::KernelBuilder k("scale_copy", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", s.dtype, 2, access);
  auto out = k.tensor("out", s.dtype, 2, access);
  auto scale = k.scalar("scale", s.dtype);

  k.grid({k.blocks(x, 0, s.block_m), k.blocks(x, 1, s.block_n)});
  auto row = k.block_id(0) * k.index(s.block_m);
  auto col = k.block_id(1) * k.index(s.block_n);
  auto tile = k.load(x, {row, col}, {s.block_m, s.block_n});
  k.store(tile * scale, out, {row, col});
  return k.build();
}

} // namespace tilejit::elementwise
