// unpack_e2m1.dsl.cpp - unpack_from_e2m1fn_x2 in the tile DSL: the tensors
// seen flat (x's bytes, out's twice as many values), a block decodes
// threads x bytes_per_thread consecutive bytes.
#include "quant/unpack_e2m1.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

Kernel unpack_e2m1_kernel(const UnpackE2m1Spec &s) {
  dsl::KernelBuilder k("unpack_from_e2m1fn_x2", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", DType::u8, 1, access);
  auto out = k.tensor("out", s.out_dtype, 1, access);
  const int64_t tile = int64_t{s.threads} * s.bytes_per_thread;
  k.grid({k.blocks(x, 0, tile)});
  auto i0 = k.block_id(0) * k.index(tile);
  auto codes = k.unpack_nibbles(k.load(x, {i0}, {tile}));
  k.store(k.cast(k.from_e2m1(codes), s.out_dtype), out, {i0 * k.index(2)});
  return k.build();
}

} // namespace tilejit::quant
