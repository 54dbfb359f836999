// dtype_cast.dsl.cpp - cast in the tile DSL: the tensors seen flat, a block
// converts threads x per_thread consecutive elements.
#include "quant/dtype_cast.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel dtype_cast_kernel(const DtypeCastSpec &s) {
  dsl::KernelBuilder k("cast", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", s.in_dtype, 1, access);
  auto out = k.tensor("out", s.out_dtype, 1, access);
  const int64_t tile = int64_t{s.threads} * s.per_thread;
  k.grid({k.blocks(x, 0, tile)});
  auto i0 = k.block_id(0) * k.index(tile);
  k.store(k.cast(k.load(x, {i0}, {tile}), s.out_dtype), out, {i0});
  return k.build();
}

} // namespace tilejit::quant
