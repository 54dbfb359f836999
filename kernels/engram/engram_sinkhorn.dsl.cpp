// engram_sinkhorn.dsl.cpp - The Engram Sinkhorn building blocks in the tile
// DSL. Momentum: flat, m32 = fma(m, c0, c1 * g), the buffer m32 in its
// dtype, out = fma(g, c1, c0 * m32) (nesterov) or m32. Step: block p takes
// its rows in turn; a row's iterate x = (rs * M) * cs stays in registers
// over its chunks, n = sqrt(sum x^2) (one block sum), inv = 1 / (n + eps),
// the row scale times inv, and (x inv)^2 added to the block's column sums,
// carried over the rows and stored once. Reduce: each thread adds its
// column of the partial rows in order (exact). Finalize: x * (alpha / (n +
// eps)), a block a row.
#include "engram/engram_sinkhorn.h"
#include "common/ordered_sum.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::engram {

using dsl::Value;

Kernel sinkhorn_momentum_kernel(const SinkhornMomentumSpec &s) {
  dsl::KernelBuilder k("engram_sinkhorn_momentum_update", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto grad = k.tensor("grad", s.grad, 1, access);
  auto buffer = k.tensor("momentum_buffer", s.buffer, 1, access);
  auto buffer_out = k.tensor("momentum_buffer_out", s.buffer, 1, access);
  auto out = k.tensor("sinkhorn_input", f32, 1, access);
  auto c0 = k.scalar("beta1", f32), c1 = k.scalar("one_minus_beta1", f32);
  const int64_t tile = int64_t{s.threads} * 8;
  k.grid({k.blocks(grad, 0, tile)});
  auto i0 = k.block_id(0) * k.index(tile);
  auto g = k.cast(k.load(grad, {i0}, {tile}), f32);
  // Each element read, then written, by one thread: in place when the
  // output is the buffer.
  auto m = k.fma(k.cast(k.load(buffer, {i0}, {tile}), f32), c0, c1 * g);
  k.store(k.cast(m, s.buffer), buffer_out, {i0});
  k.store(s.nesterov ? k.fma(g, c1, c0 * m) : m, out, {i0});
  return k.build();
}

namespace {

/// Row r's iterate (rs * M[r]) * cs as chunks, and its norm.
struct RowIterate {
  std::vector<Value> x;
  Value norm; // (1, 1)
};

RowIterate iterate(dsl::KernelBuilder &k, const SinkhornRowSpec &s,
                   const dsl::Tensor &matrix, const dsl::Tensor &col_scale,
                   Value r, Value rs) {
  RowIterate it;
  const int64_t chunk = s.chunk;
  Value sq = k.full({1, chunk}, 0, DType::f32);
  for (int64_t c = 0; c < s.cols / chunk; ++c) {
    auto at = k.index(c * chunk);
    auto x = (rs * k.load(matrix, {r, at}, {1, chunk})) *
             k.load(col_scale, {k.index(0), at}, {1, chunk});
    sq = k.fma(x, x, sq);
    it.x.push_back(x);
  }
  it.norm = k.sqrt(k.reduce_sum(sq, 1));
  return it;
}

} // namespace

Kernel sinkhorn_step_kernel(const SinkhornRowSpec &s) {
  dsl::KernelBuilder k("engram_sinkhorn_step", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto matrix = k.tensor("matrix", f32, 2, access);             // (R, Dh)
  auto row_scale = k.tensor("row_scale", f32, 1);               // (R,)
  auto col_scale = k.tensor("col_scale_row", f32, 2, access);   // (1, Dh)
  auto row_norm = k.tensor("row_norm_rows", f32, 2);            // (R, 1)
  auto scale_out = k.tensor("row_scale_out_rows", f32, 2);      // (R, 1)
  auto partial = k.tensor("col_sumsq_partial", f32, 2, access); // (P, Dh)
  auto eps = k.scalar("eps", f32);
  const int64_t chunk = s.chunk, chunks = s.cols / chunk;
  k.grid({k.blocks(partial, 0)});
  auto p = k.block_id(0), zero = k.index(0);
  auto rows = k.dim(matrix, 0), parts = k.dim(partial, 0);
  auto rpc = (rows + parts - k.index(1)) / parts;
  auto begin = k.min(p * rpc, rows), end = k.min(begin + rpc, rows);
  auto sums = k.serial(begin, end,
                       std::vector<Value>(static_cast<size_t>(chunks),
                                          k.full({1, chunk}, 0, f32)),
                       [&](Value r, std::vector<Value> acc) {
                         auto rs = k.load_scalar(row_scale, {r});
                         RowIterate it =
                             iterate(k, s, matrix, col_scale, r, rs);
                         auto inv = k.constant(1, f32) / (it.norm + eps);
                         // Each row's scale read (above) and written once.
                         k.store(it.norm, row_norm, {r, zero});
                         k.store(rs * inv, scale_out, {r, zero});
                         for (int64_t c = 0; c < chunks; ++c) {
                           auto y = it.x[c] * inv;
                           acc[c] = k.fma(y, y, acc[c]);
                         }
                         return acc;
                       });
  // The block's partial row (zeros where it had no rows).
  for (int64_t c = 0; c < chunks; ++c)
    k.store(sums[c], partial, {p, k.index(c * chunk)});
  return k.build();
}

Kernel sinkhorn_step_reduce_kernel(const SinkhornReduceSpec &s) {
  dsl::KernelBuilder k("engram_sinkhorn_step_reduce", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  auto partial = k.tensor("col_sumsq_partial", f32, 2); // (P, Dh)
  auto out = k.tensor("col_sumsq_row", f32, 2);         // (1, Dh)
  const int64_t bn = s.threads;
  k.grid({k.blocks(partial, 1, bn)});
  auto n0 = k.block_id(0) * k.index(bn), zero = k.index(0);
  // (0 + p_0) + p_1 + ...: a column a thread, in partial order, `unroll`
  // rows in flight (the columns are all the parallel work there is).
  auto sum = ordered_sums(
      k, k.dim(partial, 0), s.unroll, {k.full({1, bn}, 0, f32)}, [&](Value i) {
        return std::vector<Value>{k.load(partial, {i, n0}, {1, bn})};
      });
  k.store(sum[0], out, {zero, n0});
  return k.build();
}

Kernel sinkhorn_finalize_kernel(const SinkhornRowSpec &s) {
  dsl::KernelBuilder k("engram_sinkhorn_finalize", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto matrix = k.tensor("matrix", f32, 2, access);           // (R, Dh)
  auto row_scale = k.tensor("row_scale", f32, 1);             // (R,)
  auto col_scale = k.tensor("col_scale_row", f32, 2, access); // (1, Dh)
  auto out = k.tensor("out", f32, 2, access);                 // (R, Dh)
  auto eps = k.scalar("eps", f32), alpha = k.scalar("alpha", f32);
  k.grid({k.blocks(matrix, 0)});
  auto r = k.block_id(0);
  RowIterate it =
      iterate(k, s, matrix, col_scale, r, k.load_scalar(row_scale, {r}));
  auto f = alpha / (it.norm + eps);
  for (size_t c = 0; c < it.x.size(); ++c)
    k.store(it.x[c] * f, out, {r, k.index(static_cast<int64_t>(c) * s.chunk)});
  return k.build();
}

} // namespace tilejit::engram
