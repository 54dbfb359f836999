// inplace_unique_group_indices.dsl.cpp - inplace_unique_group_indices in the
// tile DSL: each thread holds one row of ids (padded to a power of two) and
// compares each id with those before it; a row is read whole before it is
// written, so out may be the input.
#include "moe/inplace_unique_group_indices.h"

#include "tilejit/compiler/dsl.h"

#include <bit>

namespace tilejit::moe {

Kernel inplace_unique_group_indices_kernel(const UniqueGroupIndicesSpec &s) {
  dsl::KernelBuilder k("inplace_unique_group_indices", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  auto ids = k.tensor("group_indices", DType::i64, 2);
  auto out = k.tensor("out", DType::i64, 2);
  const int64_t bt = s.block_t;
  const auto width =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(s.topk)));
  k.grid({k.blocks(ids, 0, bt)});
  auto t0 = k.block_id(0) * k.index(bt);
  auto c64 = [&](int64_t v) { return k.constant(v, DType::i64); };
  auto row = k.relayout(k.load(ids, {t0, k.index(0)}, {bt, width}), width);
  std::vector<dsl::Value> id;
  for (int64_t j = 0; j < s.topk; ++j)
    id.push_back(k.take(row, 1, k.index(j)));
  auto result = row;
  for (int64_t j = 1; j < s.topk; ++j) {
    // -1 where an earlier id (as read: a repeat of a repeat is a repeat of
    // the first) equals this one, unless this one is negative.
    auto kept = id[j];
    for (int64_t i = 0; i < j; ++i)
      kept = k.select(k.eq(id[i], id[j]), c64(-1), kept);
    kept = k.select(k.lt(id[j], c64(0)), id[j], kept);
    result = k.put(result, 1, k.index(j), kept);
  }
  k.store(result, out, {t0, k.index(0)});
  return k.build();
}

} // namespace tilejit::moe
