// swiglu_forward_and_per_token_cast.dsl.cpp - the fused SwiGLU forward in the
// tile DSL: per_token_cast's boxes (per_token_cast_boxes) over a source that
// loads the gate and up boxes of a tile, clamps (and counts the clamps with
// one atomic add a block and counter), computes act = (g / (1 + exp(-g))) *
// u in f32, weights and masks its rows (by pos_to_expert, or in 2.1's form
// by the psum layout, with a weight a row).
#include "quant/swiglu_forward_and_per_token_cast.h"
#include "quant/per_token_cast_dsl.h"
#include "quant/psum_dsl.h"

#include "tilejit/compiler/dsl.h"

#include <bit>
#include <numeric>
#include <optional>

namespace tilejit::quant {

Kernel
swiglu_forward_and_per_token_cast_kernel(const SwigluForwardCastSpec &s) {
  dsl::KernelBuilder k("swiglu_forward_and_per_token_cast", s.threads);
  dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto gate = k.tensor("gate", s.in_dtype, 2, access);
  auto up = k.tensor("up", s.in_dtype, 2, access);
  std::optional<dsl::Tensor> weight_src, weight_rows, row_expert, counts, psum,
      row_weight;
  if (s.weights) {
    weight_src = k.tensor("weight_src", DType::f32, s.row_by_thread() ? 3 : 2);
    weight_rows = k.tensor("pos_to_token_topk", DType::i32, 1);
  }
  if (s.pos_to_expert)
    row_expert = k.tensor("row_expert", DType::i32, s.row_by_thread() ? 3 : 2);
  if (s.psum)
    psum = k.tensor("psum_rows", DType::i32, 2);
  std::optional<dsl::Value> clamp, rsf;
  if (s.row_weights) {
    row_weight = k.tensor("weight_rows", DType::f32, 2);
    rsf = k.scalar("routed_scaling_factor", DType::f32);
  }
  if (s.clamp)
    clamp = k.scalar(s.tk21 ? "clamp_value" : "swiglu_clamp_value", DType::f32);
  if (s.count)
    counts = k.tensor("counts", DType::i64, 2);
  auto f32 = [&](dsl::Value v) { return k.cast(v, DType::f32); };
  auto zero = k.index(0);

  auto activation = [&](dsl::Value r0, dsl::Value c0, int64_t rows,
                        int64_t cols, dsl::Bounds bounds) {
    const std::vector<int64_t> tile_shape = {rows, cols};
    // The shape the math runs in. With one row a tile, (R, threads, v):
    // thread j holds [:, j, :] in the layout of v-element vectors dealt to
    // the threads in turn, so that a row's value, loaded (1, threads, 1)
    // one a thread, broadcasts in registers (on the H200 the benchmark's
    // mask went from 3.5 % of its time to nothing). Else (rows, cols), a
    // row's value reduced from (rows, copies) copies and broadcast.
    const bool by_thread = s.row_by_thread();
    const int64_t threads = s.threads, v = s.row_vector();
    const std::vector<int64_t> shape =
        by_thread ? std::vector<int64_t>{cols / (threads * v), threads, v}
                  : tile_shape;
    auto g = k.reshape(f32(k.load(gate, {r0, c0}, tile_shape, bounds)), shape);
    auto u = k.reshape(f32(k.load(up, {r0, c0}, tile_shape, bounds)), shape);
    const int64_t copies = threads / std::gcd<int64_t>(rows, threads);
    const std::vector<dsl::Value> row_origin =
        by_thread ? std::vector<dsl::Value>{r0, zero, zero}
                  : std::vector<dsl::Value>{r0, zero};
    const std::vector<int64_t> row_shape =
        by_thread ? std::vector<int64_t>{1, threads, 1}
                  : std::vector<int64_t>{rows, copies};
    auto per_row = [&](dsl::Value repeated) {
      auto one_a_thread = k.relayout(repeated, 1);
      return by_thread ? one_a_thread : k.reduce_max(one_a_thread, 1);
    };
    std::optional<dsl::Value> valid;
    if (row_expert)
      valid =
          k.broadcast(k.ge(per_row(k.load(*row_expert, row_origin, row_shape)),
                           k.constant(0, DType::i32)),
                      shape);
    if (psum) // 2.1: (rows, cols) tiles
      valid = k.broadcast(k.gt(psum_valid(k, *psum, k.dim(gate, 0), r0, rows,
                                          s.experts, s.alignment),
                               k.constant(0, DType::i32)),
                          shape);
    else if (s.tk21 && counts) // rows past x are not counted
      valid = k.lt(k.iota(shape, 0) + k.cast(r0, DType::i32),
                   k.cast(k.dim(gate, 0), DType::i32));
    if (clamp) {
      auto c = *clamp, minus_c = k.constant(0, DType::f32) - *clamp;
      if (counts) {
        // Elements outside x read 0, which no positive C counts; rows of
        // a negative expert are not counted.
        auto none = k.full(shape, 0, DType::i32);
        // Summed within each thread first: (R, threads, v) over R and v;
        // (rows, cols) as (rows, parts, p), p the power of two in cols,
        // over the parts (as the cast reduces its groups).
        const int64_t p = cols & -cols;
        auto total_of = [&](dsl::Value n) {
          if (by_thread)
            return k.reduce_sum(k.reduce_sum(k.reduce_sum(n, 2), 0), 1);
          auto parts = k.reshape(n, {rows, cols / p, p});
          return k.reduce_sum(k.reduce_sum(k.reduce_sum(parts, 1), 2), 0);
        };
        auto counted = [&](dsl::Value hit, int64_t weight) {
          auto n = k.select(hit, k.full(shape, weight, DType::i32), none);
          return valid ? k.select(*valid, n, none) : n;
        };
        auto add_count = [&](dsl::Value total, int64_t j) {
          k.atomic_add(k.reshape(k.cast(total, DType::i64), {1, 1}), *counts,
                       {k.index(j), zero});
        };
        if (rows * cols < (1 << 16)) {
          // The first two counts in one i32's 16-bit halves: one reduction
          // across the threads for both (a block's tile holds fewer than
          // 2^16 elements, so neither half carries into the other).
          auto both =
              total_of(counted(k.gt(g, c), 1) + counted(k.gt(u, c), 1 << 16));
          auto low = k.constant(0xffff, DType::i32);
          add_count(k.bit_and(both, low), 0);
          add_count(k.bit_and(k.shr(both, k.constant(16, DType::i32)), low), 1);
        } else {
          add_count(total_of(counted(k.gt(g, c), 1)), 0);
          add_count(total_of(counted(k.gt(u, c), 1)), 1);
        }
        add_count(total_of(counted(k.lt(u, minus_c), 1)), 2);
        if (s.tk21) // valid rows x H, elements past x not
          add_count(total_of(counted(*valid, 1)), 3);
      }
      g = k.min(g, c);
      u = k.min(k.max(u, minus_c), c);
    }
    // §11's order: t = 1 + expf(-g) (CUDA's expf, an IEEE add), then an
    // IEEE division and a multiply.
    auto t = k.constant(1, DType::f32) + k.exp(k.constant(0, DType::f32) - g);
    auto act = (g / t) * u;
    if (weight_src)
      act = act *
            per_row(k.gather(*weight_src, *weight_rows, row_origin, row_shape));
    if (row_weight) // 2.1: w = topk_weights[r] * rsf first
      act =
          act * k.broadcast(
                    per_row(k.load(*row_weight, row_origin, row_shape)) * *rsf,
                    shape);
    if (valid)
      act = k.select(*valid, act, k.full(shape, 0, DType::f32));
    return k.reshape(act, tile_shape);
  };
  std::optional<double> clamp_min;
  if (s.sf_clamp_min)
    clamp_min = std::bit_cast<float>(s.sf_clamp_min);
  per_token_cast_boxes(
      k, s.cast(),
      {.extent = gate, .tile = activation, .clamp_min = clamp_min});
  return k.build();
}

} // namespace tilejit::quant
