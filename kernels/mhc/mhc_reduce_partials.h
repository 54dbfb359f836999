// mhc_reduce_partials.h - TileKernels 2.1's mhc_reduce_partials_and_rmsnorm
// forward and backward on the GPU (shared/specs/tk21_ops.md §6.2);
// declared in mhc_reduce_partials.cpp.
#pragma once

#include "op/op_def.h"
#include "op/spec_fields.h"

namespace tilejit::mhc {

const ops::OpDef &mhc_reduce_partials_and_rmsnorm_fwd_op();
const ops::OpDef &mhc_reduce_partials_and_rmsnorm_bwd_op();

/// Static parameters: G RMS groups of N3 mixes; a block takes block_t
/// tokens, a (block_t, N3 padded to a power of two) tile a group.
struct MhcReducePartialsSpec {
  int32_t groups = 1; ///< G
  int32_t mixes = 24; ///< N3
  int32_t block_t = 32;
  int32_t threads = 256;
};
TILEJIT_SPEC_FIELDS(MhcReducePartialsSpec, groups, mixes, block_t, threads)

/// The kernels in the DSL (mhc_reduce_partials.dsl.cpp).
Kernel mhc_reduce_partials_fwd_kernel(const MhcReducePartialsSpec &spec);
Kernel mhc_reduce_partials_bwd_kernel(const MhcReducePartialsSpec &spec);

} // namespace tilejit::mhc
