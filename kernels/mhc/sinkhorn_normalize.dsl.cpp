// sinkhorn_normalize.dsl.cpp - sinkhorn_normalize in the tile DSL: a block
// holds block_b matrices; row and column sums are reductions along the last
// two dimensions, broadcast back for free.
#include "mhc/sinkhorn_normalize.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::mhc {

Kernel sinkhorn_normalize_kernel(const SinkhornSpec &s) {
  dsl::KernelBuilder k("sinkhorn_normalize", s.threads);
  dsl::Access access =
      s.vector_bytes ? dsl::inner_contiguous(s.vector_bytes) : dsl::Access{};
  auto x = k.tensor("x", DType::f32, 3, access);
  auto out = k.tensor("out", DType::f32, 3, access);

  const int64_t n = s.n;
  auto b0 = k.block_id(0) * k.index(s.block_b);
  auto zero = k.index(0);
  auto y = k.load(x, {b0, zero, zero}, {s.block_b, n, n});
  auto eps = k.constant(std::bit_cast<float>(s.eps_bits), DType::f32);
  auto rows = [&](dsl::Value v) { return k.reduce_sum(v, 2) + eps; };
  auto cols = [&](dsl::Value v) { return k.reduce_sum(v, 1) + eps; };

  auto e = k.exp(y - k.reduce_max(y, 2));
  y = e / k.reduce_sum(e, 2) + eps;
  y = y / cols(y);
  for (int r = 1; r < s.repeat; ++r) {
    y = y / rows(y);
    y = y / cols(y);
  }
  k.store(y, out, {b0, zero, zero});
  return k.build();
}

} // namespace tilejit::mhc
