// inplace_unique_group_indices.h - repeated group ids of a row made -1 on
// the GPU (shared/specs/moe_engram_mhc.md §1.13); declared in
// inplace_unique_group_indices.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::moe {

/// out[t, k] = -1 where group_indices[t, k] >= 0 equals group_indices[t, j]
/// for some j < k, else group_indices[t, k] (the first occurrence kept;
/// negative ids left as they are). group_indices: i64 (T, K), contiguous, 1
/// <= K <= 32; out: the same, and may be group_indices itself (TileKernels'
/// in-place call). 1 <= num_groups <= 128 as TileKernels requires; ids are
/// not checked against it (TileKernels device-asserts ids below
/// align(num_groups, 64); the CPU reference rejects others). Bit-exact.
/// Throws UserError naming the argument, its value and the requirement;
/// nothing is written then.
void inplace_unique_group_indices(const rt::TensorView &group_indices,
                                  int64_t num_groups, const rt::TensorView &out,
                                  CUstream stream = nullptr);

const ops::OpDef &inplace_unique_group_indices_op();

/// Static parameters of an inplace_unique_group_indices kernel.
struct UniqueGroupIndicesSpec {
  int32_t topk = 8;      ///< K
  int32_t block_t = 128; ///< rows a block: one a thread
  int32_t threads = 128;
};
TILEJIT_SPEC_FIELDS(UniqueGroupIndicesSpec, topk, block_t, threads)

/// The kernel in the DSL (inplace_unique_group_indices.dsl.cpp).
Kernel inplace_unique_group_indices_kernel(const UniqueGroupIndicesSpec &spec);

} // namespace tilejit::moe
