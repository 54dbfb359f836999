// fused_weight.dsl.cpp - fused_weight in the tile DSL: w = float(wh) *
// float(we) (exact in f32), 1024 columns of a row a block.
#include "engram/fused_weight.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::engram {

Kernel fused_weight_kernel(const FusedWeightSpec &s) {
  dsl::KernelBuilder k("fused_weight", s.threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto wh = k.tensor("weight_hidden", DType::bf16, 2, access);
  auto we = k.tensor("weight_embed", DType::bf16, 2, access);
  auto w = k.tensor("w", DType::f32, 2, access);
  k.grid({k.blocks(wh, 0), k.blocks(wh, 1, s.block_d)});
  auto row = k.block_id(0), d0 = k.block_id(1) * k.index(s.block_d);
  auto load = [&](const dsl::Tensor &t) {
    return k.cast(k.load(t, {row, d0}, {1, s.block_d}), DType::f32);
  };
  k.store(load(wh) * load(we), w, {row, d0});
  return k.build();
}

} // namespace tilejit::engram
