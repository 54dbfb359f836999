// mhc_fn_normw_merge.h - mhc_fn_normw_merge_fwd and _bwd (TileKernels 2.1's
// raw entry points, MEM §3.3's _MHCFnNormwMerge): the projection fn (rows,
// K) times the norm weight (K,) column-wise, and its gradients accumulated
// into the callers' buffers. Declared in mhc_fn_normw_merge.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_fn_normw_merge_fwd_op();
const ops::OpDef &mhc_fn_normw_merge_bwd_op();

/// Static parameters: a block takes all rows (padded to a power of two)
/// and `block_k` columns.
struct MhcNormwSpec {
  int32_t rows = 32;
  int32_t block_k = 128;
  int32_t threads = 128;
  int32_t vector_bytes = 0;
};
TILEJIT_SPEC_FIELDS(MhcNormwSpec, rows, block_k, threads, vector_bytes)

Kernel mhc_fn_normw_merge_fwd_kernel(const MhcNormwSpec &spec);
Kernel mhc_fn_normw_merge_bwd_kernel(const MhcNormwSpec &spec);

} // namespace tilejit::mhc
