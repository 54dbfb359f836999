// sinkhorn_normalize.dsl.cpp - sinkhorn_normalize in the tile DSL: a block
// holds block_b matrices; row and column sums are reductions along the last
// two dimensions, broadcast back for free.
#include "mhc/sinkhorn_normalize.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::mhc {

Kernel sinkhorn_normalize_kernel(const SinkhornSpec &s) {
  dsl::KernelBuilder k("sinkhorn_normalize", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto x = k.tensor("x", DType::f32, 3, access);
  auto out = k.tensor("out", DType::f32, 3, access);

  const int64_t n = s.n;
  k.grid({k.blocks(x, 0, s.block_b)});
  auto b0 = k.block_id(0) * k.index(s.block_b);
  auto zero = k.index(0);
  auto y = k.load(x, {b0, zero, zero}, {s.block_b, n, n});
  auto eps = k.constant(std::bit_cast<float>(s.eps_bits), DType::f32);
  auto rows = [&](dsl::Value v) { return k.reduce_sum(v, 2) + eps; };
  auto cols = [&](dsl::Value v) { return k.reduce_sum(v, 1) + eps; };

  auto e = k.exp(y - k.reduce_max(y, 2));
  y = e / k.reduce_sum(e, 2) + eps;
  y = y / cols(y);
  // A loop, not unrolled: each step holds 2 x n IEEE divisions a thread,
  // and unrolling all `repeat` steps made ptxas the slowest stage of the
  // kernel's cold compile by far.
  y = k.serial(k.index(1), k.index(s.repeat), {y},
               [&](dsl::Value, std::vector<dsl::Value> carried) {
                 dsl::Value v = carried[0];
                 v = v / rows(v);
                 return std::vector<dsl::Value>{v / cols(v)};
               })[0];
  k.store(y, out, {b0, zero, zero});
  return k.build();
}

} // namespace tilejit::mhc
