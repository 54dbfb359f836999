// mhc_fn_normw_merge.dsl.cpp - mhc_fn_normw_merge_fwd and _bwd in the tile
// DSL: a block all rows and block_k columns; the norm weight as rows of
// stride 0. The backward adds g * w into fn_grad (one fma) and each
// column's sum over rows of g * fn into normw_grad (a (1, K) tensor read
// as a tile whose other rows read 0 and are not stored).
#include "mhc/mhc_fn_normw_merge.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::mhc {

Kernel mhc_fn_normw_merge_fwd_kernel(const MhcNormwSpec &s) {
  dsl::KernelBuilder k("mhc_fn_normw_merge_fwd", s.threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto fn = k.tensor("fn", DType::f32, 2, access);            // (R, K)
  auto normw = k.tensor("normw_rows", DType::f32, 2, access); // stride 0
  auto out_fn = k.tensor("out_fn", DType::f32, 2, access);    // (R, K)
  k.grid({k.blocks(fn, 1, s.block_k)});
  auto k0 = k.block_id(0) * k.index(s.block_k), zero = k.index(0);
  const std::vector<int64_t> box = {s.rows, s.block_k};
  k.store(k.load(fn, {zero, k0}, box) * k.load(normw, {zero, k0}, box), out_fn,
          {zero, k0});
  return k.build();
}

Kernel mhc_fn_normw_merge_bwd_kernel(const MhcNormwSpec &s) {
  dsl::KernelBuilder k("mhc_fn_normw_merge_bwd", s.threads);
  k.programmatic_launch();
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto fn = k.tensor("fn", DType::f32, 2, access);
  auto normw = k.tensor("normw_rows", DType::f32, 2, access);
  auto g = k.tensor("out_fn_grad", DType::f32, 2, access);
  auto fn_grad = k.tensor("fn_grad", DType::f32, 2, access);
  auto normw_grad = k.tensor("normw_grad", DType::f32, 2, access); // (1, K)
  auto fn_grad_out = k.tensor("fn_grad_out", DType::f32, 2, access);
  auto normw_grad_out = k.tensor("normw_grad_out", DType::f32, 2, access);
  k.grid({k.blocks(fn, 1, s.block_k)});
  auto k0 = k.block_id(0) * k.index(s.block_k), zero = k.index(0);
  const std::vector<int64_t> box = {s.rows, s.block_k};
  auto grad = k.load(g, {zero, k0}, box);
  // Each element read, then written, by one thread: in place when the
  // outputs are the buffers.
  k.store(k.fma(grad, k.load(normw, {zero, k0}, box),
                k.load(fn_grad, {zero, k0}, box)),
          fn_grad_out, {zero, k0});
  auto column = k.reduce_sum(grad * k.load(fn, {zero, k0}, box), 0);
  k.store(k.load(normw_grad, {zero, k0}, box) + column, normw_grad_out,
          {zero, k0});
  return k.build();
}

} // namespace tilejit::mhc
