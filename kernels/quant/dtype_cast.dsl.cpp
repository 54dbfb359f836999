// dtype_cast.dsl.cpp - cast in the tile DSL: the tensors seen flat, a block
// converts threads x per_thread consecutive elements; with stochastic
// rounding, as quads (§2.2) rounded in software.
#include "quant/dtype_cast.h"
#include "quant/stochastic_dsl.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::quant {

namespace {

/// The stochastic rounding of the f32 `v` (tile elements from flat index
/// i0, a multiple of 4) to `to` (bf16 or e4m3; `convert`: step's form).
dsl::Value stochastic_round(dsl::KernelBuilder &k, dsl::Value v, dsl::Value i0,
                            int64_t tile, DType to, bool convert) {
  const std::vector<int64_t> shape = {tile / 4, 4};
  auto q = k.reshape(v, shape);
  auto r = random_bits(k, q, i0 / k.index(4), shape);
  auto out =
      to == DType::bf16 ? round_bf16(k, q, r) : round_e4m3(k, q, r, convert);
  return k.reshape(out, {tile});
}

} // namespace

Kernel dtype_cast_kernel(const DtypeCastSpec &s) {
  dsl::KernelBuilder k("cast", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", s.in_dtype, 1, access);
  auto out = k.tensor("out", s.out_dtype, 1, access);
  const int64_t tile = int64_t{s.threads} * s.per_thread;
  k.grid({k.blocks(x, 0, tile)});
  auto i0 = k.block_id(0) * k.index(tile);
  auto v = k.load(x, {i0}, {tile});
  if (!s.stochastic) {
    k.store(k.cast(v, s.out_dtype), out, {i0});
    return k.build();
  }
  k.store(stochastic_round(k, k.cast(v, DType::f32), i0, tile, s.out_dtype,
                           s.stochastic_convert != 0),
          out, {i0});
  return k.build();
}

} // namespace tilejit::quant
