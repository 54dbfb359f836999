// fused_weight.h - The Engram gate's fused weight on the GPU
// (shared/specs/moe_engram_mhc.md §2.2); declared in fused_weight.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::engram {

const ops::OpDef &fused_weight_op();

/// Static parameters: a block takes 1024 columns of one row.
struct FusedWeightSpec {
  int32_t block_d = 1024;
  int32_t threads = 128;
  int32_t vector_bytes = 0; ///< 16: the rows are 16-byte aligned
};
TILEJIT_SPEC_FIELDS(FusedWeightSpec, block_d, threads, vector_bytes)

/// The kernel in the DSL (fused_weight.dsl.cpp).
Kernel fused_weight_kernel(const FusedWeightSpec &spec);

} // namespace tilejit::engram
