// sinkhorn_normalize.dsl.cpp - sinkhorn_normalize in the tile DSL: a block
// holds block_b matrices; row and column sums are reductions along the last
// two dimensions, broadcast back for free (sinkhorn_forward, mhc_dsl.h).
#include "mhc/sinkhorn_normalize.h"
#include "mhc/mhc_dsl.h"

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
  y = sinkhorn_forward(k, y, eps, s.repeat);
  k.store(y, out, {b0, zero, zero});
  return k.build();
}

} // namespace tilejit::mhc

namespace tilejit::mhc {

Kernel mhc_sinkhorn_bwd_kernel(const SinkhornSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("mhc_sinkhorn_bwd", s.threads);
  k.programmatic_launch();
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto grad_output = k.tensor("grad_output", DType::f32, 3, access);
  auto x = k.tensor("x", DType::f32, 3, access);
  auto grad_input = k.tensor("grad_input", DType::f32, 3, access);
  const int64_t n = s.n;
  k.grid({k.blocks(x, 0, s.block_b)});
  auto b0 = k.block_id(0) * k.index(s.block_b);
  auto zero = k.index(0);
  const std::vector<int64_t> box = {s.block_b, n, n};
  auto eps = k.constant(std::bit_cast<float>(s.eps_bits), DType::f32);
  auto rows = [&](Value v) { return k.reduce_sum(v, 2) + eps; };
  auto cols = [&](Value v) { return k.reduce_sum(v, 1) + eps; };
  auto col = [&](Value v) { return v / cols(v); };
  auto row = [&](Value v) { return v / rows(v); };
  // A step's backward from its input a: u = sum(g a) / (s + eps) over the
  // normalised dimension, g = (g - u) / (s + eps).
  auto col_bwd = [&](Value g, Value a) {
    auto c = cols(a);
    return (g - k.reduce_sum(g * a, 1) / c) / c;
  };
  auto row_bwd = [&](Value g, Value a) {
    auto r = rows(a);
    return (g - k.reduce_sum(g * a, 2) / r) / r;
  };

  auto y = k.load(x, {b0, zero, zero}, box);
  auto e = k.exp(y - k.reduce_max(y, 2));
  auto softmax = e / k.reduce_sum(e, 2);
  auto a1 = softmax + eps;
  // Step 1 normalises columns, then rows and columns alternate (2 repeat -
  // 1 steps). The input of step 2p + 1 (a column step) is a1 after p
  // (column, row) pairs; that of step 2p + 2 (a row step) one column step
  // further.
  auto after = [&](Value pairs) {
    return k.serial(zero, pairs, {a1}, [&](Value, std::vector<Value> c) {
      return std::vector<Value>{row(col(c[0]))};
    })[0];
  };
  const int64_t last = s.repeat - 1;
  auto g =
      col_bwd(k.load(grad_output, {b0, zero, zero}, box), after(k.index(last)));
  g = k.serial(zero, k.index(last), {g}, [&](Value q, std::vector<Value> c) {
    auto z = after(k.index(last - 1) - q);
    return std::vector<Value>{col_bwd(row_bwd(c[0], col(z)), z)};
  })[0];
  // The + eps is the identity; then the row softmax's backward.
  g = (g - k.reduce_sum(g * softmax, 2)) * softmax;
  k.store(g, grad_input, {b0, zero, zero});
  return k.build();
}

} // namespace tilejit::mhc
