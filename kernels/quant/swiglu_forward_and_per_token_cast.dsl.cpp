// swiglu_forward_and_per_token_cast.dsl.cpp - the fused SwiGLU forward in the
// tile DSL: per_token_cast's boxes (per_token_cast_boxes) over a source that
// loads the gate and up boxes of a tile, clamps (and counts the clamps with
// one atomic add a block and counter), computes act = (g / (1 + exp(-g))) *
// u in f32, weights and masks its rows.
#include "quant/swiglu_forward_and_per_token_cast.h"
#include "quant/per_token_cast_dsl.h"

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
  std::optional<dsl::Tensor> weight_src, weight_rows, row_expert, counts;
  if (s.weights) {
    weight_src = k.tensor("weight_src", DType::f32, 2);
    weight_rows = k.tensor("pos_to_token_topk", DType::i32, 1);
  }
  if (s.pos_to_expert)
    row_expert = k.tensor("row_expert", DType::i32, 2);
  std::optional<dsl::Value> clamp;
  if (s.clamp)
    clamp = k.scalar("swiglu_clamp_value", DType::f32);
  if (s.count)
    counts = k.tensor("counts", DType::i64, 2);
  auto f32 = [&](dsl::Value v) { return k.cast(v, DType::f32); };
  auto zero = k.index(0);

  auto activation = [&](dsl::Value r0, dsl::Value c0, int64_t rows,
                        int64_t cols, dsl::Bounds bounds) {
    const std::vector<int64_t> shape = {rows, cols};
    const int64_t p = cols & -cols;
    auto g = f32(k.load(gate, {r0, c0}, shape, bounds));
    auto u = f32(k.load(up, {r0, c0}, shape, bounds));
    // A per-row value: (rows, copies) repeated elements, one a thread,
    // taken back to one a row by a maximum over the copies.
    const int64_t copies = s.threads / std::gcd<int64_t>(rows, s.threads);
    auto per_row = [&](dsl::Value repeated) {
      return k.reduce_max(k.relayout(repeated, 1), 1);
    };
    std::optional<dsl::Value> valid;
    if (row_expert)
      valid = k.broadcast(
          k.ge(per_row(k.load(*row_expert, {r0, zero}, {rows, copies})),
               k.constant(0, DType::i32)),
          shape);
    if (clamp) {
      auto c = *clamp, minus_c = k.constant(0, DType::f32) - *clamp;
      if (counts) {
        // Elements outside x read 0, which no positive C counts; rows of
        // a negative expert are not counted.
        auto one = k.full(shape, 1, DType::i32),
             none = k.full(shape, 0, DType::i32);
        auto count = [&](dsl::Value hit, int64_t j) {
          auto n = k.select(hit, one, none);
          if (valid)
            n = k.select(*valid, n, none);
          // Summed over (rows, parts, p), p the power of two in cols: over
          // the parts in registers first, as the cast reduces its groups.
          auto parts = k.reshape(n, {rows, cols / p, p});
          auto total = k.reduce_sum(k.reduce_sum(k.reduce_sum(parts, 1), 2), 0);
          k.atomic_add(k.reshape(k.cast(total, DType::i64), {1, 1}), *counts,
                       {k.index(j), zero});
        };
        count(k.gt(g, c), 0);
        count(k.gt(u, c), 1);
        count(k.lt(u, minus_c), 2);
      }
      g = k.min(g, c);
      u = k.min(k.max(u, minus_c), c);
    }
    // §11's order: t = 1 + expf(-g) (CUDA's expf, an IEEE add), then an
    // IEEE division and a multiply.
    auto t = k.constant(1, DType::f32) + k.exp(k.constant(0, DType::f32) - g);
    auto act = (g / t) * u;
    if (weight_src)
      act = act * per_row(k.gather(*weight_src, *weight_rows, {r0, zero},
                                   {rows, copies}));
    if (valid)
      act = k.select(*valid, act, k.full(shape, 0, DType::f32));
    return act;
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
