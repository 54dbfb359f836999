// group_count.h - how often each group id occurs in a (T, K) index tensor,
// on the GPU (shared/specs/moe_engram_mhc.md §1.10); declared in
// group_count.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// counts[g] = the number of elements of group_idx (i64 (T, K), contiguous)
/// equal to g, for g in [0, num_groups); -1 (no group) is not counted, nor
/// is any other value outside [0, num_groups) (TileKernels device-asserts
/// on those; the CPU reference rejects them). counts: i32 (num_groups,),
/// zeroed by the op, then added to atomically. Bit-exact (integer sums).
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void group_count(const rt::TensorView &group_idx, int64_t num_groups,
                 const rt::TensorView &counts, CUstream stream = nullptr);

const ops::OpDef &group_count_op();

/// Static parameters of a group_count kernel.
struct GroupCountSpec {
  int32_t groups = 32; ///< bins counted: num_groups in whole chunks
  int32_t chunk = 32;  ///< groups compared / added to the output at once
  int32_t block = 256; ///< ids a step, a multiple of threads (match: one a
                       ///< thread)
  int32_t steps = 1;   ///< steps a block: its ids, summed before the atomics
  int32_t threads = 256;
  int32_t match = 0; ///< 1: a shared histogram by match_any; 0: compares
};
TILEJIT_SPEC_FIELDS(GroupCountSpec, groups, chunk, block, steps, threads, match)

/// The kernels in the DSL (group_count.dsl.cpp): the output zeroed, then
/// counted into.
Kernel group_count_zero_kernel(const GroupCountSpec &spec);
Kernel group_count_kernel(const GroupCountSpec &spec);

/// The spec of a count of `groups` groups over `ids` ids (bins in whole
/// chunks, ids a step from the chunk size, steps a block from the ids).
GroupCountSpec group_count_spec(int64_t groups, int64_t ids);

} // namespace tilejit::moe
