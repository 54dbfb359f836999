// aux_fi.dsl.cpp - aux_fi in the tile DSL: the output zeroed, then
// group_count's block counts, each made float(count * E) / float(T *
// num_aux_topk) and added atomically.
#include "moe/aux_fi.h"
#include "moe/group_count_dsl.h"

namespace tilejit::moe {

Kernel aux_fi_zero_kernel(const GroupCountSpec &s) {
  return zero_counts_kernel("aux_fi_zero", "fi", DType::f32, s);
}

Kernel aux_fi_kernel(const GroupCountSpec &s) {
  dsl::KernelBuilder k("aux_fi", s.threads);
  // Launched while the kernel before it on the stream finishes (a routing
  // chain of short kernels).
  k.programmatic_launch();
  // topk_idx flattened to (T * K,).
  auto ids = k.tensor("flat_topk_idx", DType::i64, 1, dsl::inner_contiguous());
  auto fi = k.tensor("fi", DType::f32, 1);
  auto experts = k.scalar("num_experts", DType::i32);
  auto denominator = k.scalar("denominator", DType::f32);
  // Fractions past num_experts (the last chunk's padding) are dropped.
  count_block_groups(k, ids, s, [&](dsl::Value counts, int64_t first) {
    k.atomic_add(k.cast(counts * experts, DType::f32) / denominator, fi,
                 {k.index(first)});
  });
  return k.build();
}

} // namespace tilejit::moe
