// grad_w_reduce.dsl.cpp - grad_w_reduce in the tile DSL: the partial rows
// (B, hc * D) as 4 groups of B / 4; a thread of a block's (4, block_n)
// tile sums its group's rows at its columns in order, `unroll` loads in
// flight a step; the groups' sums are added (gw), and gw * we, gw * wh go
// into the two gradients (each element read and written by one thread:
// in place when the outputs are the buffers).
#include "engram/grad_w_reduce.h"

#include "tilejit/compiler/dsl.h"

#include <vector>

namespace tilejit::engram {

Kernel grad_w_reduce_kernel(const GradWReduceSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("grad_w_reduce", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32, bf16 = DType::bf16;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  constexpr int64_t groups = 4;
  auto partial = k.tensor("partial_groups", f32, 3, access); // (4, B/4, N)
  // The weights and gradients as (1, N) rows.
  auto wh = k.tensor("weight_hidden", bf16, 2, access);
  auto we = k.tensor("weight_embed", bf16, 2, access);
  auto gwh = k.tensor("grad_weight_hidden", f32, 2, access);
  auto gwe = k.tensor("grad_weight_embed", f32, 2, access);
  auto gwh_out = k.tensor("grad_weight_hidden_out", f32, 2, access);
  auto gwe_out = k.tensor("grad_weight_embed_out", f32, 2, access);
  const int64_t bn = s.block_n, rows = s.partials / groups, unroll = s.unroll;
  k.grid({k.blocks(wh, 1, bn)});
  auto n0 = k.block_id(0) * k.index(bn), zero = k.index(0);
  auto sums = k.serial(
      zero, k.index(rows / unroll), {k.full({groups, bn}, 0, f32)},
      [&](Value step, std::vector<Value> acc) {
        Value v = acc[0];
        if (s.group_vector == 0) {
          for (int64_t u = 0; u < unroll; ++u) {
            auto row = step * k.index(unroll) + k.index(u);
            v = v + k.reshape(k.load(partial, {zero, row, n0}, {groups, 1, bn}),
                              {groups, bn});
          }
          return std::vector<Value>{v};
        }
        // The step's rows all loaded before the first add, so that their
        // loads are in flight at once (an add between two bounds-checked
        // loads would wait for the first), `group_vector` consecutive
        // columns of one group a thread (16-byte loads; the groups' sum
        // after the loop then crosses threads, once).
        std::vector<Value> loaded;
        for (int64_t u = 0; u < unroll; ++u) {
          auto row = step * k.index(unroll) + k.index(u);
          loaded.push_back(k.reshape(
              k.relayout(k.load(partial, {zero, row, n0}, {groups, 1, bn}),
                         s.group_vector),
              {groups, bn}));
        }
        for (const Value &l : loaded)
          v = v + l;
        return std::vector<Value>{v};
      });
  auto gw = k.reduce_sum(sums[0], 0); // (1, block_n)
  auto row = [&](const dsl::Tensor &t) {
    return k.cast(k.load(t, {zero, n0}, {1, bn}), f32);
  };
  k.store(k.fma(gw, row(we), row(gwh)), gwh_out, {zero, n0});
  k.store(k.fma(gw, row(wh), row(gwe)), gwe_out, {zero, n0});
  return k.build();
}

} // namespace tilejit::engram
