// scale_copy.dsl.cpp - scale_copy in the tile DSL: one block per
// block_m x block_n tile; the tile is loaded, scaled and stored. Tails read
// zero and drop their stores (tile.load / tile.store bounds checks).
#include "elementwise/scale_copy.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::elementwise {

Kernel scale_copy_kernel(const ScaleCopySpec &s) {
  dsl::KernelBuilder k("scale_copy", s.threads);
  dsl::Access access =
      s.vector_bytes ? dsl::inner_contiguous(s.vector_bytes) : dsl::Access{};
  auto x = k.tensor("x", s.dtype, 2, access);
  auto out = k.tensor("out", s.dtype, 2, access);
  auto scale = k.scalar("scale", s.dtype);

  auto row = k.block_id(0) * k.index(s.block_m);
  auto col = k.block_id(1) * k.index(s.block_n);
  auto tile = k.load(x, {row, col}, {s.block_m, s.block_n});
  k.store(tile * scale, out, {row, col});
  return k.build();
}

} // namespace tilejit::elementwise
