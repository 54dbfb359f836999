// batched_transpose.dsl.cpp - batched_transpose in the tile DSL: a block
// loads a block_x x block_y tile of one batch, transposes it (the compiler
// goes through padded shared memory) and stores it at the mirrored place.
#include "transpose/batched_transpose.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::transpose {

Kernel batched_transpose_kernel(const BatchedTransposeSpec &s) {
  dsl::KernelBuilder k("batched_transpose", s.threads);
  dsl::Access access =
      s.vector_bytes ? dsl::inner_contiguous(s.vector_bytes) : dsl::Access{};
  auto x = k.tensor("x", s.dtype, 3, access);
  auto out = k.tensor("out", s.dtype, 3, access);

  auto b = k.block_id(2);
  auto x0 = k.block_id(1) * k.index(s.block_x);
  auto y0 = k.block_id(0) * k.index(s.block_y);
  auto tile = k.load(x, {b, x0, y0}, {1, s.block_x, s.block_y});
  k.store(k.transpose(tile), out, {b, y0, x0});
  return k.build();
}

} // namespace tilejit::transpose
