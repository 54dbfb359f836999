// normalize_weight.dsl.cpp - normalize_weight in the tile DSL: each thread
// holds one row of weights (padded with zeros to a power of two), adds them
// in order from 1e-20 and divides the row by the sum.
#include "moe/normalize_weight.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::moe {

Kernel normalize_weight_kernel(const NormalizeWeightSpec &s) {
  dsl::KernelBuilder k("normalize_weight", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  // With aligned rows of whole vectors a thread's row is read and written
  // in place (two 16-byte accesses at K = 8); else through shared memory.
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto w = k.tensor("topk_weights", DType::f32, 2, access);
  auto denominator = k.tensor("denominator", DType::f32, 1);
  auto normalized = k.tensor("normalized", DType::f32, 2, access);
  const int64_t bt = s.block_t;
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(s.topk)));
  k.grid({k.blocks(w, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt);
  // A row a thread, so that the sum is one thread's sequence of additions.
  auto row = k.relayout(k.load(w, {t0, k.index(0)}, {bt, width}), width);
  auto sum = k.full({bt, 1}, 1e-20, DType::f32);
  for (int64_t j = 0; j < s.topk; ++j)
    sum = sum + k.take(row, 1, k.index(j));
  k.store(row / k.broadcast(sum, {bt, width}), normalized, {t0, k.index(0)});
  k.store(k.reshape(sum, {bt}), denominator, {t0});
  return k.build();
}

} // namespace tilejit::moe
