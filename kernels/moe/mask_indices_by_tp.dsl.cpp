// mask_indices_by_tp.dsl.cpp - mask_indices_by_tp in the tile DSL: the
// indices as one flat run, a block of them at a time, element by element
// (integer division by the compiled-in rank sizes).
#include "moe/mask_indices_by_tp.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::moe {

Kernel mask_indices_by_tp_kernel(const MaskIndicesByTpSpec &s) {
  dsl::KernelBuilder k("mask_indices_by_tp", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  // indices and masked flattened to (T * K,).
  auto in = k.tensor("flat_indices", s.dtype, 1, dsl::inner_contiguous());
  auto out = k.tensor("flat_masked", s.dtype, 1, dsl::inner_contiguous());
  k.grid({k.blocks(in, 0, s.block)});
  auto at = k.block_id(0) * k.index(s.block);
  auto c = [&](int64_t value) { return k.constant(value, s.dtype); };
  const int64_t per_gpu = s.per_gpu, per_dp = int64_t{s.num_tp_ranks} * per_gpu;
  auto v = k.load(in, {at}, {s.block});
  auto rank = v / c(per_gpu); // the EP rank of the expert
  auto tp = rank - (rank / c(s.num_tp_ranks)) * c(s.num_tp_ranks);
  auto local = v - c(int64_t{s.tp_rank} * per_gpu);
  auto dp = local / c(per_dp);
  auto renumbered = local - dp * c(per_dp - per_gpu);
  auto none = c(-1);
  auto masked = k.select(k.lt(renumbered, c(0)), none, renumbered);
  masked = k.select(k.ne(tp, c(s.tp_rank)), none, masked);
  masked = k.select(k.lt(v, c(0)), none, masked);
  k.store(masked, out, {at});
  return k.build();
}

} // namespace tilejit::moe
